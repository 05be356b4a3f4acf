// End-to-end tests of cluster mode's startup: what a node refuses (exit 2) and how it
// gives up on an etcd that never answers (exit 1, naming the endpoints, never a panic).
// Members at work are the multi-process suite's (make multinode); in-process placement
// is node/cluster's (make cluster).
package main

import (
	"context"
	"fmt"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/retentionkit/retention/passes"
)

func clusterSection(endpoint, extra string) string {
	return fmt.Sprintf("cluster:\n  enabled: true\n  etcd:\n    endpoints: [%q]\n  startup_timeout: 2s\n%s", endpoint, extra)
}

// freeAddr is a loopback address nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// The cluster tests do not run in parallel: the sweep lock they take or see is the
// audit-log pass's, one per database, which every other test's pass is also called.
func TestClusterModeRefusesSQLite(t *testing.T) {
	e := newEnv(t, passes.DriverSQLite)
	r := retention(t, "run", "--config", e.config("", clusterSection("127.0.0.1:2379", "")))
	if r.code != 2 || !strings.Contains(r.stderr, "cluster.enabled: cluster mode needs PostgreSQL 14 or later") {
		t.Fatalf("exit %d, stderr %q; want exit 2 saying cluster mode needs PostgreSQL", r.code, r.stderr)
	}
}

func TestClusterModeRefusesMalformedFields(t *testing.T) {
	e := newEnv(t, passes.DriverPostgres)
	tests := []struct{ name, section, want string }{
		{"endpoint", clusterSection("etcd-without-port", ""), "cluster.etcd.endpoints[0]: want host:port"},
		{"prefix", "cluster:\n  enabled: true\n  etcd:\n    endpoints: [127.0.0.1:2379]\n    prefix: nope\n", "cluster.etcd.prefix: want a key prefix"},
		{"bind", clusterSection("127.0.0.1:2379", "  bind: 127.0.0.1\n"), "cluster.bind: want host:port"},
		{"advertise", clusterSection("127.0.0.1:2379", "  advertise: \":7000\"\n"), "cluster.advertise: want host:port with a host"},
		{"credentials", clusterSection("http://root:s3cret@127.0.0.1:2379", ""), "must not carry credentials"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := retention(t, "run", "--config", e.config("", tc.section))
			if r.code != 2 || !strings.Contains(r.stderr, tc.want) || strings.Contains(r.stderr, "s3cret") {
				t.Fatalf("exit %d, stderr %q; want exit 2 naming %q", r.code, r.stderr, tc.want)
			}
		})
	}
}

func TestClusterModeGivesUpOnAnUnreachableEtcd(t *testing.T) {
	e := newEnv(t, passes.DriverPostgres)
	addr := freeAddr(t)
	r := retention(t, "run", "--config", e.config("", clusterSection(addr, "")))
	if r.code != 1 || !strings.Contains(r.stderr, "etcd at "+addr+" unreachable") {
		t.Fatalf("exit %d, stderr %q; want exit 1 naming the endpoint %s", r.code, r.stderr, addr)
	}
	if strings.Contains(r.stderr, "panic") || strings.Contains(r.stderr, "goroutine ") {
		t.Fatalf("a panic reached the user: %s", r.stderr)
	}
}

// A one-off sweep with a cluster configuration takes the members' sweep locks: while
// another session holds the pass's lock (a member sweeping it), the command deletes
// nothing and says where the pass runs.
func TestSweepInClusterModeTakesThePassLock(t *testing.T) {
	e := newEnv(t, passes.DriverPostgres)
	e.seed(20)
	before := e.count("1=1")
	ctx := context.Background()
	conn, err := e.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock(?, ?)", passes.SweepLockClass, passes.LockKey("audit-log")); err != nil {
		t.Fatal(err)
	}
	path := e.config("", clusterSection(freeAddr(t), ""))
	r := retention(t, "sweep", "--config", path)
	if got := e.count("1=1"); got != before {
		t.Fatalf("%d rows deleted while another session held the pass's lock (exit %d)\n%s", before-got, r.code, r.stderr)
	}
	t.Logf("sweep while locked elsewhere: exit %d", r.code)
	if !strings.Contains(r.stderr, "running elsewhere") {
		t.Fatalf("exit %d, stderr %q; want it to say the pass runs elsewhere", r.code, r.stderr)
	}
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_unlock(?, ?)", passes.SweepLockClass, passes.LockKey("audit-log")); err != nil {
		t.Fatal(err)
	}
	if r := retention(t, "sweep", "--config", path); r.code != 0 || e.count("1=1") == before {
		t.Fatalf("with the lock free: exit %d, %d rows left of %d\n%s", r.code, e.count("1=1"), before, r.stderr)
	}
}

// A signal while the node waits for an unreachable etcd stops it there, at once and
// with exit 0: nothing ran yet, and the operator asked it to stop.
func TestSignalWhileJoiningStopsTheNode(t *testing.T) {
	e := newEnv(t, passes.DriverPostgres)
	n := startRun(t, e.config("", strings.Replace(clusterSection(freeAddr(t), ""), "startup_timeout: 2s", "startup_timeout: 10m", 1)))
	n.waitLog(t, "joining the cluster", "")
	if err := n.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- n.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit after SIGTERM while joining: %v, want 0", err)
		}
	case <-time.After(time.Minute): // a bound on a hang, not a timing assertion
		t.Fatal("SIGTERM while joining did not stop the node")
	}
}
