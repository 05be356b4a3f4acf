package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
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
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
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
	e := &env{t: t, driver: driver, dir: t.TempDir(), prefix: fmt.Sprintf("e%d_", time.Now().UnixNano()%1_000_000_000)}
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
		for _, table := range []string{"legal_hold", "audit_log", "quarantine", "settings", "dead_letter", "work_queue", "log", "metadata", "node", "migrations", "migration_locks"} {
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

func eachDriver(t *testing.T, f func(t *testing.T, e *env)) {
	t.Run("sqlite", func(t *testing.T) { f(t, newEnv(t, passes.DriverSQLite)) })
	t.Run("postgres", func(t *testing.T) { f(t, newEnv(t, passes.DriverPostgres)) })
}

func TestValidateRefusesBadConfigs(t *testing.T) {
	e := newEnv(t, passes.DriverSQLite)
	tests := []struct {
		name, passExtra, top, want string
	}{
		{"unknown field", "    batch_sise: 10", "", "batch_sise"},
		{"negative duration", "    batch_delay: -1s", "", `pass "audit-log": batch_delay`},
		{"zero batch size", "  - { name: zero, table: t, key: id, timestamp: ts, retention_period: 1d, batch_size: 0 }", "", `pass "zero": batch_size`},
		{"bad identifier", "  - { name: evil, table: \"x; DROP TABLE y\", key: id, timestamp: ts, retention_period: 1d }", "", `pass "evil": table`},
		{"duplicate pass names", "  - { name: audit-log, table: other, key: id, timestamp: ts, retention_period: 1d }", "", `pass "audit-log": name is already used`},
		{"internal name with its own retention", "", "metadata_cleanup:\n  names:\n    - { name: retention.work-queue, retention_period: 1h }", "names[0]"},
		{"non-loopback admin without a token", "", "", "node.admin"},
		{"missing table", "  - { name: ghost, table: ghost_table, key: id, timestamp: ts, retention_period: 1d }", "", "ghost_table"},
		{"short and full name of one pass with two retentions",
			"  - { name: github.com/acme/jobs.PatchPass, table: " + e.prefix + "audit_log, key: id, timestamp: occurred_at, timestamp_format: unix, retention_period: 1d }",
			"metadata_cleanup:\n  names:\n    - { name: PatchPass, retention_period: 1h }\n    - { name: github.com/acme/jobs.PatchPass, retention_period: 24h }",
			"same pass"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := e.config(tc.passExtra, tc.top)
			if tc.name == "non-loopback admin without a token" {
				e.edit(path, "node:\n", "node:\n  admin: 0.0.0.0:9464\n")
			}
			r := retention(t, "validate", "--config", path)
			if r.code != 2 || !strings.Contains(r.stderr, tc.want) {
				t.Fatalf("exit %d, stderr %q; want exit 2 naming %q", r.code, r.stderr, tc.want)
			}
		})
	}
	t.Run("a good config", func(t *testing.T) {
		if r := retention(t, "validate", "--config", e.config("", "")); r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
	})
}

func TestDryRunThenDrain(t *testing.T) {
	eachDriver(t, func(t *testing.T, e *env) {
		e.seed(1000)
		path := e.config("", "")
		before := e.count("1 = 1")
		dry := retention(t, "sweep", "--config", path, "--dry-run")
		if dry.code != 0 || e.count("1 = 1") != before {
			t.Fatalf("dry run: exit %d, rows %d -> %d: %s", dry.code, before, e.count("1 = 1"), dry.stderr)
		}
		var name string
		var would, kept int
		for _, line := range strings.Split(dry.stdout, "\n") {
			if strings.HasPrefix(line, "audit-log") {
				fmt.Sscan(line, &name, &would, &kept)
			}
		}
		cutoff := time.Now().Add(-30 * 24 * time.Hour).Unix()
		wantGone := e.count(fmt.Sprintf("occurred_at < %d AND state = 'done' AND id NOT IN (SELECT audit_log_id FROM %slegal_hold)", cutoff, e.prefix))
		if would != wantGone || kept == 0 {
			t.Fatalf("dry run says %d would go, %d kept; the table says %d:\n%s", would, kept, wantGone, dry.stdout)
		}
		drain := retention(t, "sweep", "--config", path, "--drain")
		if drain.code != 0 {
			t.Fatalf("drain: exit %d: %s", drain.code, drain.stderr)
		}
		if got := before - e.count("1 = 1"); got != would {
			t.Fatalf("drain deleted %d, the dry run said %d\n%s", got, would, drain.stdout)
		}
		if left := e.count(fmt.Sprintf("occurred_at < %d AND state = 'done' AND id NOT IN (SELECT audit_log_id FROM %slegal_hold)", cutoff, e.prefix)); left != 0 {
			t.Fatalf("%d expired rows left", left)
		}
		if !strings.Contains(drain.stdout, "DELETED") || !strings.Contains(drain.stdout, "drained") {
			t.Fatalf("no summary:\n%s", drain.stdout)
		}
	})
}

// node is a running `retention run` whose JSON log lines can be waited for.
type runningNode struct {
	cmd   *exec.Cmd
	lines chan map[string]any
}

func startRun(t *testing.T, path string) *runningNode {
	t.Helper()
	cmd := exec.Command(binary, "run", "--config", path, "--log-format", "json")
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

func TestRunTriggerAndAdmin(t *testing.T) {
	e := newEnv(t, passes.DriverSQLite)
	e.seed(300)
	path := e.config("    sweep_interval: 24h", "")
	e.edit(path, "node:\n", "node:\n  admin: 127.0.0.1:0\n")
	n := startRun(t, path)
	addr := n.waitLog(t, "admin endpoint listening", "")["addr"].(string)
	n.waitLog(t, "sweep done", "audit-log") // the first sweep, at start

	get := func(p string) (int, string) {
		resp, err := http.Get("http://" + addr + p)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := get("/readyz"); code != http.StatusOK {
		t.Fatalf("/readyz = %d", code)
	}
	if backlog := metricValue(t, get, `retention_backlog_rows{pass="audit-log"}`); backlog != 0 {
		t.Fatalf("backlog after a drained sweep = %v", backlog)
	}
	deletedBefore := metricValue(t, get, `retention_rows_deleted_total{pass="audit-log"}`)
	if deletedBefore == 0 {
		t.Fatal("/metrics: no rows deleted after the first sweep")
	}
	resp, err := http.Post("http://"+addr+"/trigger/audit-log", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("a trigger without a configured token got %d, want 403", resp.StatusCode)
	}

	// More expired rows arrive; a trigger from the command line makes the node sweep.
	e.exec(fmt.Sprintf("INSERT INTO %saudit_log (id, occurred_at, state) VALUES (5001, %d, 'done')", e.prefix, time.Now().Add(-40*24*time.Hour).Unix()))
	if r := retention(t, "trigger", "--config", path, "audit-log"); r.code != 0 {
		t.Fatalf("trigger: exit %d: %s", r.code, r.stderr)
	}
	n.waitLog(t, "sweep done", "audit-log")
	if e.count("id = 5001") != 0 {
		t.Fatal("the triggered sweep did not delete the new expired row")
	}
	if after := metricValue(t, get, `retention_rows_deleted_total{pass="audit-log"}`); after != deletedBefore+1 {
		t.Fatalf("rows deleted counter went from %v to %v, want +1", deletedBefore, after)
	}

	if err := n.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := n.cmd.Wait(); err != nil {
		t.Fatalf("run exited with %v after SIGTERM", err)
	}
}

func TestSIGTERMMidDrainLeavesNoPartialBatch(t *testing.T) {
	eachDriver(t, func(t *testing.T, e *env) {
		e.seed(3000)
		before := e.count("1 = 1")
		n := startRun(t, e.config("    batch_delay: 50ms\n    max_batches_per_sweep: 1000", ""))
		n.waitLog(t, "sweep started", "audit-log")
		if err := n.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		done := n.waitLog(t, "sweep done", "audit-log")
		if err := n.cmd.Wait(); err != nil {
			t.Fatalf("run exited with %v after SIGTERM", err)
		}
		deleted := before - e.count("1 = 1")
		if done["reason"] != "stopped" || int(done["rows"].(float64)) != deleted {
			t.Fatalf("sweep done %v, %d rows gone from the table", done, deleted)
		}
		if deleted%50 != 0 {
			t.Fatalf("%d rows deleted: not a whole number of 50-row batches", deleted)
		}
		if deleted >= 2000 { // about 2,250 rows are expired: the signal came mid-drain
			t.Fatalf("%d rows deleted: the drain finished before the signal", deleted)
		}
	})
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

func TestAdminTokenGuardsMutations(t *testing.T) {
	e := newEnv(t, passes.DriverSQLite)
	path := e.config("    sweep_interval: 24h", "")
	e.edit(path, "node:\n", "node:\n  admin: 127.0.0.1:0\n  admin_token: s3cret\n")
	n := startRun(t, path)
	addr := n.waitLog(t, "admin endpoint listening", "")["addr"].(string)
	n.waitLog(t, "node running", "") // the endpoint listens before the passes start
	post := func(token string) int {
		req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/trigger/audit-log", nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := post(""); code != http.StatusUnauthorized {
		t.Fatalf("no token: %d, want 401", code)
	}
	if code := post("wrong"); code != http.StatusUnauthorized {
		t.Fatalf("wrong token: %d, want 401", code)
	}
	if code := post("s3cret"); code != http.StatusAccepted {
		t.Fatalf("right token: %d, want 202", code)
	}
}

func TestSweepProgressBars(t *testing.T) {
	e := newEnv(t, passes.DriverSQLite)
	e.seed(500)
	r := retention(t, "sweep", "--config", e.config("", ""), "--progress", "always")
	if r.code != 0 || !strings.Contains(r.stdout, "rows [") || !strings.Contains(r.stdout, "audit-log") || !strings.Contains(r.stdout, "STOP REASON") {
		t.Fatalf("exit %d, stdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if r := retention(t, "sweep", "--config", e.config("", ""), "--progress", "sometimes"); r.code != 2 {
		t.Fatalf("a bad --progress exited %d, want 2", r.code)
	}
}

func TestADSNPasswordNeverShows(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "retention.yaml")
	body := "database:\n  driver: postgres\n  dsn: \"postgres://app:hunter2secret@127.0.0.1:1/app?sslmode=disable\"\npasses: []\n"
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	r := retention(t, "validate", "--config", path)
	if r.code != 1 || strings.Contains(r.stdout+r.stderr, "hunter2secret") || !strings.Contains(r.stderr, "app:xxxxx@") {
		t.Fatalf("exit %d, output leaks or hides too much:\n%s%s", r.code, r.stdout, r.stderr)
	}
	// RETENTION_DATABASE_URL wins over the file and is redacted the same way.
	cmd := exec.Command(binary, "validate", "--config", path)
	cmd.Env = append(os.Environ(), "RETENTION_DATABASE_URL=postgres://app:0therSecret@127.0.0.1:2/app?sslmode=disable")
	out, _ := cmd.CombinedOutput()
	if strings.Contains(string(out), "0therSecret") || !strings.Contains(string(out), "127.0.0.1:2") {
		t.Fatalf("with RETENTION_DATABASE_URL:\n%s", out)
	}
}

func TestStatusShowsTheLastRunAndBacklog(t *testing.T) {
	e := newEnv(t, passes.DriverSQLite)
	e.seed(200)
	path := e.config("", "")
	if r := retention(t, "sweep", "--config", path); r.code != 0 {
		t.Fatalf("sweep: %d %s", r.code, r.stderr)
	}
	r := retention(t, "status", "--config", path)
	if r.code != 0 || !strings.Contains(r.stdout, "Completed") || !strings.Contains(r.stdout, "drained") {
		t.Fatalf("status: exit %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, line := range strings.Split(r.stdout, "\n") {
		if strings.HasPrefix(line, "audit-log") && !strings.HasPrefix(strings.Fields(line)[1], "0") {
			t.Fatalf("backlog after a drained sweep is not 0: %q", line)
		}
	}
}

// TestASecondSignalCancelsAtOnce holds a batch in the database far longer than the test
// could wait, with a grace period as long: only the second signal's cancellation lets the
// node exit.
func TestASecondSignalCancelsAtOnce(t *testing.T) {
	e := newEnv(t, passes.DriverPostgres)
	e.seed(10)
	path := e.config("    where: \"pg_sleep(600) IS NOT NULL\"", "")
	e.edit(path, "shutdown_grace: 10s", "shutdown_grace: 600s")
	n := startRun(t, path)
	n.waitLog(t, "sweep started", "audit-log")
	_ = n.cmd.Process.Signal(syscall.SIGTERM)
	n.waitLog(t, "stopping: in-flight batches finish within the grace period", "")
	_ = n.cmd.Process.Signal(syscall.SIGTERM)
	n.waitLog(t, "stopped after cancelling in-flight batches", "")
	if err := n.cmd.Wait(); err != nil {
		t.Fatalf("run exited with %v", err)
	}
	if e.count("1 = 1") != 10 {
		t.Fatal("the cancelled batch deleted rows")
	}
}

// TestDrainExitsOneWhileLockedRowsRemain holds 50 expired, deletable rows locked in
// another transaction: SKIP LOCKED passes over them, and the drain, after retrying within
// --drain-retry, exits 1 naming how many are left and why. Once they are released a drain
// deletes them and exits 0.
func TestDrainExitsOneWhileLockedRowsRemain(t *testing.T) {
	e := newEnv(t, passes.DriverPostgres)
	e.seed(1000)
	path := e.config("", "")
	ctx := context.Background()
	cutoff := time.Now().Add(-30 * 24 * time.Hour).Unix()
	deletable := fmt.Sprintf("occurred_at < %d AND state = 'done' AND id NOT IN (SELECT audit_log_id FROM %slegal_hold)", cutoff, e.prefix)
	holder, err := e.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Rollback()
	var locked []int64
	if err := holder.NewRaw("SELECT id FROM "+e.prefix+"audit_log WHERE "+deletable+" AND id > 500 ORDER BY id LIMIT 50 FOR UPDATE").Scan(ctx, &locked); err != nil || len(locked) != 50 {
		t.Fatalf("locked %d rows: %v", len(locked), err)
	}

	r := retention(t, "sweep", "--config", path, "--drain", "--drain-retry", "1s")
	if r.code != 1 || !strings.Contains(r.stderr, "audit-log: 50 expired rows left (") || !strings.Contains(r.stderr, "locked by other transactions") {
		t.Fatalf("drain with locked rows: exit %d, stderr:\n%s\nstdout:\n%s", r.code, r.stderr, r.stdout)
	}
	if left := e.count(deletable); left != 50 {
		t.Fatalf("%d deletable rows left, want the 50 locked ones", left)
	}
	if err := holder.Rollback(); err != nil {
		t.Fatal(err)
	}
	if r := retention(t, "sweep", "--config", path, "--drain"); r.code != 0 {
		t.Fatalf("drain after the locks went: exit %d: %s", r.code, r.stderr)
	}
	if left := e.count(deletable); left != 0 {
		t.Fatalf("%d deletable rows left after the locks went", left)
	}
}

// TestASweepWhoseBatchesTimeOutExitsOne makes every batch outlast batch_timeout: the
// sweep, drained or not, deleted nothing and must not exit 0.
func TestASweepWhoseBatchesTimeOutExitsOne(t *testing.T) {
	e := newEnv(t, passes.DriverPostgres)
	e.seed(100)
	before := e.count("1 = 1")
	path := e.config("    where: \"(SELECT pg_sleep(0.5)) IS NOT NULL\"\n    batch_timeout: 100ms", "")
	r := retention(t, "sweep", "--config", path)
	if r.code != 1 || !strings.Contains(r.stderr, "audit-log: a batch timed out") || !strings.Contains(r.stdout, "cancelled") {
		t.Fatalf("sweep: exit %d, stderr:\n%s\nstdout:\n%s", r.code, r.stderr, r.stdout)
	}
	r = retention(t, "sweep", "--config", path, "--drain", "--drain-retry", "1s")
	if r.code != 1 || !strings.Contains(r.stderr, "expired rows left (its batches time out") {
		t.Fatalf("drain: exit %d, stderr:\n%s\nstdout:\n%s", r.code, r.stderr, r.stdout)
	}
	if e.count("1 = 1") != before {
		t.Fatal("a cancelled batch deleted rows")
	}
}

// TestATableThatDisappearsIsConfigurationDrift renames the pass's table away under a
// running node: the pass reports configuration drift (one warning per failure, /readyz
// 503 naming the pass and why) and keeps retrying; once the table is back it sweeps
// again and the node is ready.
func TestATableThatDisappearsIsConfigurationDrift(t *testing.T) {
	eachDriver(t, func(t *testing.T, e *env) {
		e.seed(200)
		path := e.config("    sweep_interval: 24h", "")
		e.edit(path, "node:\n", "node:\n  admin: 127.0.0.1:0\n")
		n := startRun(t, path)
		addr := n.waitLog(t, "admin endpoint listening", "")["addr"].(string)
		n.waitLog(t, "sweep done", "audit-log")
		readyz := func() (int, readiness) {
			resp, err := http.Get("http://" + addr + "/readyz")
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var body readiness
			if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
				t.Fatal(err)
			}
			return resp.StatusCode, body
		}
		if code, body := readyz(); code != http.StatusOK || body.Status != "ready" {
			t.Fatalf("/readyz before the drift = %d %+v", code, body)
		}

		e.exec("ALTER TABLE " + e.prefix + "audit_log RENAME TO " + e.prefix + "audit_log_away")
		if r := retention(t, "trigger", "--config", path, "audit-log"); r.code != 0 {
			t.Fatalf("trigger: exit %d: %s", r.code, r.stderr)
		}
		const drift = "configuration drift: a table or column the pass was configured with is missing; retrying"
		first := n.waitLog(t, drift, "audit-log")
		if !strings.Contains(fmt.Sprint(first["error"]), "audit_log") {
			t.Fatalf("the drift line does not say what is missing: %v", first)
		}
		code, body := readyz()
		if code != http.StatusServiceUnavailable || body.Status != "degraded" || len(body.Passes) != 1 ||
			body.Passes[0].Pass != "audit-log" || body.Passes[0].Reason != "configuration_drift" || !strings.Contains(body.Passes[0].Error, "audit_log") {
			t.Fatalf("/readyz in drift = %d %+v", code, body)
		}
		get := func(p string) (int, string) {
			resp, err := http.Get("http://" + addr + p)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, string(b)
		}
		// The next failure says it once: no other line of the pass comes between.
		for timeout := time.After(time.Minute); ; { // a bound on a hang
			var m map[string]any
			select {
			case line, ok := <-n.lines:
				if !ok {
					t.Fatal("the node exited during the drift")
				}
				m = line
			case <-timeout:
				t.Fatal("no second drift line")
			}
			if m["pass"] != "audit-log" {
				continue
			}
			if m["msg"] != drift {
				t.Fatalf("a second line for one drift failure: %v", m)
			}
			break
		}

		// The second drift line means the metrics observer has had the first restart.
		if v := metricValue(t, get, `retention_configuration_drift{pass="audit-log"}`); v != 1 {
			t.Fatalf("retention_configuration_drift in drift = %v", v)
		}

		e.exec("ALTER TABLE " + e.prefix + "audit_log_away RENAME TO " + e.prefix + "audit_log")
		n.waitLog(t, "configuration drift cleared: the pass swept again", "audit-log")
		if code, body := readyz(); code != http.StatusOK || body.Status != "ready" {
			t.Fatalf("/readyz after the table came back = %d %+v", code, body)
		}
		// Observers hear each event in turn: once the log observer logs the next sweep's
		// start, the metrics observer has had the sweep that cleared the drift.
		if r := retention(t, "trigger", "--config", path, "audit-log"); r.code != 0 {
			t.Fatalf("trigger: exit %d: %s", r.code, r.stderr)
		}
		n.waitLog(t, "sweep started", "audit-log")
		if v := metricValue(t, get, `retention_configuration_drift{pass="audit-log"}`); v != 0 {
			t.Fatalf("retention_configuration_drift after the table came back = %v", v)
		}
		if err := n.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if err := n.cmd.Wait(); err != nil {
			t.Fatalf("run exited with %v after SIGTERM", err)
		}
	})
}

// TestValidateWaitsOutALockedTable runs `validate` while another session holds the
// pass's table under an ACCESS EXCLUSIVE lock: the checks time out and are retried (a
// log line says so) instead of exiting 2; once the lock goes, validate exits 0.
func TestValidateWaitsOutALockedTable(t *testing.T) {
	e := newEnv(t, passes.DriverPostgres)
	path := e.config("", "")
	ctx := context.Background()
	holder, err := e.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Rollback()
	if _, err := holder.ExecContext(ctx, "LOCK TABLE "+e.prefix+"audit_log IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, "validate", "--config", path, "--log-format", "json")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	retrying := make(chan map[string]any, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil && m["msg"] == "database unavailable during the startup checks; retrying" {
				select {
				case retrying <- m:
				default:
				}
			}
		}
	}()
	select {
	case m := <-retrying:
		if !strings.Contains(fmt.Sprint(m["error"]), `pass "audit-log"`) {
			t.Fatalf("the retry line does not name the pass: %v", m)
		}
	case <-time.After(time.Minute): // a bound on a hang
		t.Fatal("validate did not retry the locked table's checks")
	}
	if err := holder.Rollback(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("validate after the lock went: %v", err)
	}
}
