// Package pgcluster makes throwaway PostgreSQL clusters with Debian's cluster tools
// (pg_createcluster, pg_ctlcluster, pg_dropcluster) on ports free at the time, for the
// suites and benchmarks that must crash, restart or replicate a server of their own
// rather than share the one other work uses. It needs root and PostgreSQL's server
// packages; it imports only the standard library, so a test and a benchmark program
// can both use it.
package pgcluster

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
)

// Cluster is one cluster this package created. Its owner stops, crashes and drops it.
type Cluster struct {
	Version string // the PostgreSQL major version, e.g. "15"
	Name    string // the cluster's name: the prefix and its port
	Port    int
}

// Options says how to create a cluster. The zero value is Debian's default
// configuration with trust authentication, named "pg_<port>".
type Options struct {
	// Prefix starts the cluster's name ("<prefix>_<port>"), so DropStale can find what
	// an interrupted run left behind; empty is "pg".
	Prefix string
	// Settings are server settings ("name=value") written into its configuration. A
	// replica needs at least its primary's max_connections and the like, so pass it the
	// same settings.
	Settings []string
}

// Create creates and starts a cluster on a free port, with trust authentication for
// local and loopback connections (enough for a replica on the loopback to stream).
func Create(o Options) (*Cluster, error) {
	c, err := create(o)
	if err != nil {
		return nil, err
	}
	if err := c.Start(); err != nil {
		c.Drop()
		return nil, err
	}
	return c, nil
}

func create(o Options) (*Cluster, error) {
	version, err := NewestServer()
	if err != nil {
		return nil, err
	}
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	prefix := o.Prefix
	if prefix == "" {
		prefix = "pg"
	}
	c := &Cluster{Version: version, Name: fmt.Sprintf("%s_%d", prefix, port), Port: port}
	args := []string{"--start-conf=manual", "-p", strconv.Itoa(port)}
	for _, s := range o.Settings {
		args = append(args, "-o", s)
	}
	args = append(args, version, c.Name, "--", "--auth-host=trust", "--auth-local=trust")
	if out, err := exec.Command("pg_createcluster", args...).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("pg_createcluster %v: %w\n%s", args, err, out)
	}
	return c, nil
}

// CreateReplica creates a streaming replica of primary and starts it: a cluster of its
// own whose data directory is replaced by pg_basebackup -R of the primary, run as the
// postgres user (the server refuses a data directory root owns). The caller waits for
// it to stream (pg_stat_replication on the primary) if it needs to.
func CreateReplica(ctx context.Context, primary *Cluster, o Options) (*Cluster, error) {
	r, err := create(o)
	if err != nil {
		return nil, err
	}
	if err := r.replaceWithBackupOf(ctx, primary); err != nil {
		r.Drop()
		return nil, err
	}
	if err := r.Start(); err != nil {
		r.Drop()
		return nil, err
	}
	return r, nil
}

func (c *Cluster) replaceWithBackupOf(ctx context.Context, primary *Cluster) error {
	data := fmt.Sprintf("/var/lib/postgresql/%s/%s", c.Version, c.Name)
	// Empty the data directory the postgres user owns (its parent is not its to write).
	entries, err := os.ReadDir(data)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(data, e.Name())); err != nil {
			return err
		}
	}
	bb := exec.CommandContext(ctx, "runuser", "-u", "postgres", "--", "pg_basebackup",
		"-h", "127.0.0.1", "-p", strconv.Itoa(primary.Port), "-U", "postgres",
		"-D", data, "-R", "-X", "stream", "-c", "fast")
	if out, err := bb.CombinedOutput(); err != nil {
		return fmt.Errorf("pg_basebackup: %w\n%s", err, out)
	}
	return nil
}

// DropStale drops the clusters named with prefix that are down: a run stopped by a
// timeout or an interrupt never reached its own Drop. A cluster that is up may belong
// to a run in progress and is left alone.
func DropStale(prefix string) {
	out, err := exec.Command("pg_lsclusters", "-h").Output()
	if err != nil {
		return
	}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) >= 4 && strings.HasPrefix(f[1], prefix+"_") && f[3] == "down" {
			_ = exec.Command("pg_dropcluster", f[0], f[1]).Run()
		}
	}
}

// NewestServer returns the newest PostgreSQL major version whose server is installed.
func NewestServer() (string, error) {
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

// FreePort returns a loopback port that was free a moment ago.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Ctl runs pg_ctlcluster for this cluster (start waits until the server accepts
// connections).
func (c *Cluster) Ctl(action string, extra ...string) error {
	args := append([]string{"--skip-systemctl-redirect", c.Version, c.Name, action}, extra...)
	if out, err := exec.Command("pg_ctlcluster", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("pg_ctlcluster %v: %w\n%s", args, err, out)
	}
	return nil
}

// Start starts the server (after Crash, too).
func (c *Cluster) Start() error { return c.Ctl("start") }

// Crash stops the server the way a power cut would: no checkpoint, every backend gone.
func (c *Cluster) Crash() error { return c.Ctl("stop", "-m", "immediate") }

// Drop stops and removes the cluster, data and configuration; a failure is printed to
// stderr, as there is nothing left for the caller to do about it.
func (c *Cluster) Drop() {
	_ = c.Ctl("stop", "-m", "immediate")
	if out, err := exec.Command("pg_dropcluster", c.Version, c.Name).CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "pgcluster: pg_dropcluster %s %s: %v\n%s", c.Version, c.Name, err, out)
	}
}

// DSN is the URL of database db on the cluster, as the postgres user.
func (c *Cluster) DSN(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", c.Port, db)
}

// DropAll stops and drops every cluster named with prefix, up or down: for a program
// that is the only user of its prefix, such as a benchmark cleaning up after an
// interrupted run of itself.
func DropAll(prefix string) {
	out, err := exec.Command("pg_lsclusters", "-h").Output()
	if err != nil {
		return
	}
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && strings.HasPrefix(f[1], prefix+"_") {
			_ = exec.Command("pg_ctlcluster", "--skip-systemctl-redirect", f[0], f[1], "stop", "-m", "immediate").Run()
			_ = exec.Command("pg_dropcluster", f[0], f[1]).Run()
		}
	}
}
