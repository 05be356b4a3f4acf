package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/retentionkit/retention/passes"
)

// cluster is a PostgreSQL cluster the benchmark made with pg_createcluster, so the
// measurement has a server of its own (Debian's default configuration) instead of one
// other work shares.
type cluster struct {
	version, name string
	port          int
}

func (c *cluster) dsn(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", c.port, db)
}

func (c *cluster) ctl(action string, extra ...string) error {
	args := append([]string{"--skip-systemctl-redirect", c.version, c.name, action}, extra...)
	if out, err := exec.Command("pg_ctlcluster", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("pg_ctlcluster %v: %w\n%s", args, err, out)
	}
	return nil
}

func (c *cluster) drop() {
	_ = c.ctl("stop", "-m", "fast")
	if out, err := exec.Command("pg_dropcluster", c.version, c.name).CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "pacing: pg_dropcluster %s %s: %v\n%s", c.version, c.name, err, out)
	}
}

// newestServer is the newest PostgreSQL major version installed.
func newestServer() (string, error) {
	found, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	var versions []int
	for _, f := range found {
		if v, err := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(f)))); err == nil {
			versions = append(versions, v)
		}
	}
	if len(versions) == 0 {
		return "", fmt.Errorf("no PostgreSQL server under /usr/lib/postgresql")
	}
	sort.Ints(versions)
	return strconv.Itoa(versions[len(versions)-1]), nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// dropStale drops the benchmark's clusters an interrupted run left behind.
func dropStale(prefix string) {
	out, err := exec.Command("pg_lsclusters", "-h").Output()
	if err != nil {
		return
	}
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && strings.HasPrefix(f[1], prefix) {
			_ = exec.Command("pg_ctlcluster", "--skip-systemctl-redirect", f[0], f[1], "stop", "-m", "immediate").Run()
			_ = exec.Command("pg_dropcluster", f[0], f[1]).Run()
		}
	}
}

// createPrimary creates and starts a cluster with trust authentication (its pg_hba also
// lets a replica on the loopback stream from it).
func createPrimary(name string) (*cluster, error) {
	version, err := newestServer()
	if err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	c := &cluster{version: version, name: fmt.Sprintf("%s_%d", name, port), port: port}
	args := []string{"--start-conf=manual", "-p", strconv.Itoa(port), "-o", "max_connections=100",
		version, c.name, "--", "--auth-host=trust", "--auth-local=trust"}
	if out, err := exec.Command("pg_createcluster", args...).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("pg_createcluster %v: %w\n%s", args, err, out)
	}
	if err := c.ctl("start"); err != nil {
		c.drop()
		return nil, err
	}
	return c, nil
}

// createReplica makes a streaming replica of primary: a cluster of its own whose data
// directory is replaced by pg_basebackup -R of the primary, run as the postgres user
// (the server refuses a data directory root owns).
func createReplica(ctx context.Context, primary *cluster, name string) (*cluster, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	r := &cluster{version: primary.version, name: fmt.Sprintf("%s_%d", name, port), port: port}
	args := []string{"--start-conf=manual", "-p", strconv.Itoa(port), r.version, r.name, "--", "--auth-host=trust", "--auth-local=trust"}
	if out, err := exec.Command("pg_createcluster", args...).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("pg_createcluster %v: %w\n%s", args, err, out)
	}
	data := fmt.Sprintf("/var/lib/postgresql/%s/%s", r.version, r.name)
	// Empty the data directory the postgres user owns (its parent is not its to write).
	entries, err := os.ReadDir(data)
	if err != nil {
		r.drop()
		return nil, err
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(data, e.Name())); err != nil {
			r.drop()
			return nil, err
		}
	}
	bb := exec.CommandContext(ctx, "runuser", "-u", "postgres", "--", "pg_basebackup", "-h", "127.0.0.1", "-p", strconv.Itoa(primary.port),
		"-U", "postgres", "-D", data, "-R", "-X", "stream", "-c", "fast")
	if out, err := bb.CombinedOutput(); err != nil {
		r.drop()
		return nil, fmt.Errorf("pg_basebackup: %w\n%s", err, out)
	}
	if err := r.ctl("start"); err != nil {
		r.drop()
		return nil, err
	}
	// Wait until the primary sees the replica streaming.
	db, err := passes.Open(ctx, passes.DriverPostgres, primary.dsn("postgres"))
	if err != nil {
		return nil, err
	}
	defer db.Close()
	deadline := time.Now().Add(time.Minute)
	for {
		var n int
		if err := db.QueryRowContext(ctx, "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'").Scan(&n); err == nil && n > 0 {
			return r, nil
		}
		if time.Now().After(deadline) {
			r.drop()
			return nil, fmt.Errorf("replica %s never started streaming", r.name)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
