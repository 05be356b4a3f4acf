// End-to-end tests of cluster mode's startup: what a node refuses (exit 2) and how it
// gives up on an etcd that never answers (exit 1, naming the endpoints, never a panic).
// Members at work are the multi-process suite's (make multinode); in-process placement
// is node/cluster's (make cluster).
package main

import (
	"fmt"
	"net"
	"strings"
	"testing"

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
