// The end-to-end harness: the binary built once, a database with an audit table and its
// config file, a running node and its log lines. The tests are in e2e_*_test.go.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/dbtest"
)

// binary is the retention binary the end-to-end tests run, built once by TestMain.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "retention-e2e")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "retention")
	if out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// result is one finished command.
type result struct {
	code           int
	stdout, stderr string
}

func retention(t *testing.T, args ...string) result {
	t.Helper()
	return retentionWith(t, nil, args...)
}

// retentionWith runs the binary with vars added to the test's environment (what
// t.Setenv would do, which a parallel test may not).
func retentionWith(t *testing.T, vars []string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = append(os.Environ(), vars...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{code, out.String(), errb.String()}
}

// envSeq numbers the envs of this test binary (see newEnv's prefix).
var envSeq atomic.Int64

// env is a database with an audit table and a config file pointing at it.
type env struct {
	t      *testing.T
	db     *bun.DB
	driver string
	dsn    string
	dir    string
	prefix string
}

func newEnv(t *testing.T, driver string) *env {
	t.Helper()
	// The prefix keeps the tables of tests running side by side on one server apart: the
	// sequence within this process, the clock across runs and packages.
	prefix := fmt.Sprintf("e%d_%d_", time.Now().UnixNano()%1_000_000_000, envSeq.Add(1))
	e := &env{t: t, driver: driver, dir: t.TempDir(), prefix: prefix}
	switch driver {
	case passes.DriverSQLite:
		e.dsn = filepath.Join(e.dir, "app.db")
		db, err := passes.Open(context.Background(), driver, e.dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		e.db = db
	default:
		e.db, e.dsn = dbtest.Postgres(t), dbtest.PostgresURL()
	}
	p := e.prefix
	e.exec(`CREATE TABLE ` + p + `audit_log (id BIGINT PRIMARY KEY, occurred_at BIGINT NOT NULL, state TEXT NOT NULL)`)
	e.exec(`CREATE INDEX ` + p + `audit_log_ts ON ` + p + `audit_log (occurred_at, id)`)
	e.exec(`CREATE TABLE ` + p + `legal_hold (id BIGINT PRIMARY KEY, audit_log_id BIGINT NOT NULL REFERENCES ` + p + `audit_log (id))`)
	e.exec(`CREATE INDEX ` + p + `legal_hold_log ON ` + p + `legal_hold (audit_log_id)`)
	t.Cleanup(func() {
		if driver == passes.DriverPostgres {
			// A statement the node left running on the server when it exited (a backlog
			// count over a where that sleeps) would hold these tables for minutes, and
			// with them any later DROP SCHEMA on the shared database.
			_, _ = e.db.ExecContext(context.Background(), `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
				WHERE datname = current_database() AND pid <> pg_backend_pid() AND strpos(query, ?) > 0`, p)
		}
		for _, table := range []string{"legal_hold", "audit_log", "quarantine", "backlog_sample", "partition_retirements", "settings", "dead_letter", "work_queue", "log", "metadata", "node", "migrations", "migration_locks"} {
			_, _ = e.db.ExecContext(context.Background(), "DROP TABLE IF EXISTS "+p+table)
		}
	})
	return e
}

func (e *env) exec(q string, args ...any) {
	e.t.Helper()
	if _, err := e.db.ExecContext(context.Background(), q, args...); err != nil {
		e.t.Fatalf("%s: %v", q, err)
	}
}

// seed writes n audit rows, every tenth of them recent, every fiftieth expired one on
// legal hold, and every seventh 'pending' (filtered out).
func (e *env) seed(n int) {
	now := time.Now().Unix()
	var values []string
	for id := 1; id <= n; id++ {
		at := now - 40*24*3600 - int64(id)
		if id%10 == 0 {
			at = now - 3600
		}
		state := "done"
		if id%7 == 0 {
			state = "pending"
		}
		values = append(values, fmt.Sprintf("(%d, %d, '%s')", id, at, state))
		if len(values) == 500 || id == n {
			e.exec("INSERT INTO " + e.prefix + "audit_log (id, occurred_at, state) VALUES " + strings.Join(values, ", "))
			values = values[:0]
		}
	}
	e.exec("INSERT INTO "+e.prefix+"legal_hold (id, audit_log_id) SELECT id, id FROM "+e.prefix+"audit_log WHERE id % 50 = 1", nil...)
}

func (e *env) count(where string) int {
	e.t.Helper()
	var n int
	if err := e.db.QueryRowContext(context.Background(), "SELECT count(*) FROM "+e.prefix+"audit_log WHERE "+where).Scan(&n); err != nil {
		e.t.Fatal(err)
	}
	return n
}

// config writes a config file; extra is appended to the passes entry, top to the file.
func (e *env) config(passExtra, top string) string {
	e.t.Helper()
	body := fmt.Sprintf(`database:
  driver: %s
  dsn: %q
node:
  max_concurrent_deletes: 2
  shutdown_grace: 10s
passes:
  - name: audit-log
    table: %saudit_log
    key: id
    timestamp: occurred_at
    timestamp_format: unix
    filter: { column: state, in: [done] }
    retention_period: 30d
    batch_size: 50
    max_startup_stagger: 0s
    children:
      - { table: %slegal_hold, foreign_key: audit_log_id, on_delete: block }
%s
ledger:
  table_prefix: %s
%s`, e.driver, e.dsn, e.prefix, e.prefix, passExtra, e.prefix, top)
	path := filepath.Join(e.dir, fmt.Sprintf("retention-%d.yaml", time.Now().UnixNano()))
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		e.t.Fatal(err)
	}
	return path
}

// edit replaces the first old with new in the config file at path.
func (e *env) edit(path, old, new string) {
	e.t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil || !bytes.Contains(raw, []byte(old)) {
		e.t.Fatalf("config %s has no %q (%v)", path, old, err)
	}
	if err := os.WriteFile(path, bytes.Replace(raw, []byte(old), []byte(new), 1), 0o600); err != nil {
		e.t.Fatal(err)
	}
}

// eachDriver runs f on SQLite and on PostgreSQL side by side: each subtest has its own
// database or table prefix, so they share nothing but the server.
func eachDriver(t *testing.T, f func(t *testing.T, e *env)) {
	for _, driver := range []string{passes.DriverSQLite, passes.DriverPostgres} {
		t.Run(driver, func(t *testing.T) {
			t.Parallel()
			f(t, newEnv(t, driver))
		})
	}
}

// node is a running `retention run` whose JSON log lines can be waited for.
type runningNode struct {
	cmd   *exec.Cmd
	lines chan map[string]any
}

func startRun(t *testing.T, path string) *runningNode {
	t.Helper()
	return startRunWith(t, nil, path)
}

// startRunWith starts `retention run` with vars added to the test's environment.
func startRunWith(t *testing.T, vars []string, path string) *runningNode {
	t.Helper()
	cmd := exec.Command(binary, "run", "--config", path, "--log-format", "json")
	cmd.Env = append(os.Environ(), vars...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	n := &runningNode{cmd: cmd, lines: make(chan map[string]any, 1000)}
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				n.lines <- m
			}
		}
		close(n.lines)
	}()
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return n
}

// waitLog waits for a log line with msg (and pass, when given).
func (n *runningNode) waitLog(t *testing.T, msg, pass string) map[string]any {
	t.Helper()
	timeout := time.After(time.Minute) // a bound on a hang, not a timing assertion
	for {
		select {
		case m, ok := <-n.lines:
			if !ok {
				t.Fatalf("the node exited before logging %q", msg)
			}
			if m["msg"] == msg && (pass == "" || m["pass"] == pass) {
				return m
			}
		case <-timeout:
			t.Fatalf("no %q log line", msg)
		}
	}
}

// metricValue reads one sample from /metrics.
func metricValue(t *testing.T, get func(string) (int, string), series string) float64 {
	t.Helper()
	_, body := get("/metrics")
	for _, line := range strings.Split(body, "\n") {
		if rest, ok := strings.CutPrefix(line, series+" "); ok {
			var v float64
			if _, err := fmt.Sscan(rest, &v); err == nil {
				return v
			}
		}
	}
	t.Fatalf("/metrics has no %s:\n%.2000s", series, body)
	return 0
}

// seed0 writes one expired 'done' audit row with the given id.
func (e *env) seed0(id int) {
	e.t.Helper()
	e.exec(fmt.Sprintf("INSERT INTO %saudit_log (id, occurred_at, state) VALUES (%d, %d, 'done')", e.prefix, id, time.Now().Add(-40*24*time.Hour).Unix()))
}
