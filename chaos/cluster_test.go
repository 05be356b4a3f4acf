//go:build chaos

package chaos

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/retentionkit/retention/passes"
)

// cluster is a PostgreSQL cluster the suite created with pg_createcluster, on a port
// that was free when it started. It is the suite's to stop, crash and restart.
type cluster struct {
	version, name string
	port          int
}

// serverSettings make the throwaway cluster fast (no fsync) and its deadlock detector
// quick, so the deadlock scenario resolves in a tenth of a second.
var serverSettings = []string{
	"fsync=off", "synchronous_commit=off", "full_page_writes=off",
	"deadlock_timeout=100ms", "max_connections=200", "shared_buffers=64MB",
}

// createCluster creates and starts a cluster on a free port, after removing what an
// interrupted earlier run left behind.
func createCluster() (*cluster, error) {
	dropStaleClusters()
	version, err := newestServer()
	if err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	c := &cluster{version: version, name: fmt.Sprintf("chaos_%d", port), port: port}
	args := []string{"--start-conf=manual", "-p", strconv.Itoa(port)}
	for _, s := range serverSettings {
		args = append(args, "-o", s)
	}
	args = append(args, version, c.name, "--", "--auth-host=trust", "--auth-local=trust")
	if out, err := exec.Command("pg_createcluster", args...).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("pg_createcluster %v: %w\n%s", args, err, out)
	}
	if err := c.ctl("start"); err != nil {
		c.drop()
		return nil, err
	}
	return c, nil
}

// dropStaleClusters drops the suite's clusters that are down: a run stopped by a
// timeout or an interrupt never reached its own pg_dropcluster. A cluster that is up
// may belong to a run in progress and is left alone.
func dropStaleClusters() {
	out, err := exec.Command("pg_lsclusters", "-h").Output()
	if err != nil {
		return
	}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) >= 4 && strings.HasPrefix(f[1], "chaos_") && f[3] == "down" {
			_ = exec.Command("pg_dropcluster", f[0], f[1]).Run()
		}
	}
}

// newestServer returns the newest PostgreSQL version whose server is installed.
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

// ctl runs pg_ctlcluster for this cluster (start waits until the server accepts
// connections).
func (c *cluster) ctl(action string, extra ...string) error {
	args := append([]string{"--skip-systemctl-redirect", c.version, c.name, action}, extra...)
	if out, err := exec.Command("pg_ctlcluster", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("pg_ctlcluster %v: %w\n%s", args, err, out)
	}
	return nil
}

// crash stops the server the way a power cut would: no checkpoint, every backend gone.
func (c *cluster) crash() error { return c.ctl("stop", "-m", "immediate") }

// start starts the server after crash.
func (c *cluster) start() error { return c.ctl("start") }

// drop stops and removes the cluster, data and configuration.
func (c *cluster) drop() {
	_ = c.ctl("stop", "-m", "immediate")
	if out, err := exec.Command("pg_dropcluster", c.version, c.name).CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "chaos: pg_dropcluster %s %s: %v\n%s", c.version, c.name, err, out)
	}
}

// dsn is the URL of database db on the cluster.
func (c *cluster) dsn(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", c.port, db)
}

// testDSN is dsn with the application name the fault injectors spare.
// Its read timeout is longer than pgdriver's 10s default, for the suite's own
// measurements on a machine shared with other work.
func (c *cluster) testDSN(db string) string {
	return c.dsn(db) + "&read_timeout=120s&application_name=" + testApp
}

// testApp names the suite's own connections, so killing "every backend" spares them.
const testApp = "chaos-suite"

// createDatabase creates a fresh database for one scenario and returns its name.
func (c *cluster) createDatabase(t *testing.T) string {
	t.Helper()
	name := strings.ToLower(strings.NewReplacer("/", "_", " ", "_", "-", "_").Replace(t.Name()))
	db := open(t, c.testDSN("postgres"))
	defer db.Close()
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	return name
}

// open opens a PostgreSQL database through the project's own driver setup.
func open(t *testing.T, dsn string) *sql.DB {
	t.Helper()
	db, err := passes.Open(context.Background(), passes.DriverPostgres, dsn)
	if err != nil {
		t.Fatal(err)
	}
	return db.DB
}
