// End-to-end tests of what an operator watches: /healthz, /readyz and the metrics.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/retentionkit/retention/node/health"
	"github.com/retentionkit/retention/passes"
)

// TestATableThatDisappearsIsConfigurationDrift renames the pass's table away under a
// running node: the pass reports configuration drift (one warning per failure, /readyz
// 503 naming the pass and why) and keeps retrying; once the table is back it sweeps
// again and the node is ready.
func TestATableThatDisappearsIsConfigurationDrift(t *testing.T) {
	t.Parallel()
	eachDriver(t, func(t *testing.T, e *env) {
		e.seed(200)
		path := e.config("    sweep_interval: 24h", "")
		e.edit(path, "node:\n", "node:\n  admin: 127.0.0.1:0\n")
		n := startRun(t, path)
		addr := n.waitLog(t, "admin endpoint listening", "")["addr"].(string)
		n.waitLog(t, "sweep done", "audit-log")
		readyz := func() (int, readyBody) {
			resp, err := http.Get("http://" + addr + "/readyz")
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var body readyBody
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

// readyBody is /readyz's JSON body as docs/node.md documents it.
type readyBody struct {
	Status string           `json:"status"`
	Passes []health.Problem `json:"passes"`
}

// adminGet returns a GET of the node's admin endpoint at addr.
func adminGet(t *testing.T, addr string) func(string) (int, string) {
	return func(p string) (int, string) {
		t.Helper()
		resp, err := http.Get("http://" + addr + p)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
}

// readyzOf reads /readyz.
func readyzOf(t *testing.T, get func(string) (int, string)) (int, readyBody) {
	t.Helper()
	code, raw := get("/readyz")
	var body readyBody
	if err := json.Unmarshal([]byte(raw), &body); err != nil {
		t.Fatalf("/readyz body %q: %v", raw, err)
	}
	return code, body
}

// TestReadyzDegradesAfterNFailedSweepsAndRecovers makes every sweep fail with a
// statement timeout (a transient error: supervision keeps restarting the pass): /readyz
// stays 200 until node.ready_after_failures (2 here) sweeps failed in a row, then
// answers 503 naming the pass, reason failing_sweeps; one good sweep makes it 200 again.
func TestReadyzDegradesAfterNFailedSweepsAndRecovers(t *testing.T) {
	t.Parallel()
	e := newEnv(t, passes.DriverPostgres)
	e.seed(100)
	e.exec("CREATE TABLE " + e.prefix + "pace (s FLOAT NOT NULL)")
	e.exec("INSERT INTO " + e.prefix + "pace VALUES (0)")
	t.Cleanup(func() { _, _ = e.db.ExecContext(context.Background(), "DROP TABLE IF EXISTS "+e.prefix+"pace") })
	path := e.config(fmt.Sprintf("    sweep_interval: 24h\n    statement_timeout: 200ms\n    where: \"(SELECT pg_sleep(s) FROM %space) IS NOT NULL\"", e.prefix), "")
	e.edit(path, "node:\n", "node:\n  admin: 127.0.0.1:0\n  ready_after_failures: 2\n")
	n := startRun(t, path)
	get := adminGet(t, n.waitLog(t, "admin endpoint listening", "")["addr"].(string))
	n.waitLog(t, "sweep done", "audit-log")
	if code, body := readyzOf(t, get); code != http.StatusOK || body.Status != "ready" {
		t.Fatalf("/readyz after a good sweep = %d %+v", code, body)
	}

	e.exec("UPDATE " + e.prefix + "pace SET s = 1")
	e.seed0(5001) // something to delete, so the sweep runs its statement
	if r := retention(t, "trigger", "--config", path, "audit-log"); r.code != 0 {
		t.Fatalf("trigger: exit %d: %s", r.code, r.stderr)
	}
	var degraded readyBody
	waitFor(t, "/readyz to answer 503", func() bool {
		code, body := readyzOf(t, get)
		if code == http.StatusOK {
			return false
		}
		degraded = body
		return true
	})
	if degraded.Status != "degraded" || len(degraded.Passes) != 1 {
		t.Fatalf("/readyz degraded body = %+v", degraded)
	}
	p := degraded.Passes[0]
	if p.Pass != "audit-log" || p.Reason != health.FailingSweeps || p.ConsecutiveFailures != 2 || !strings.Contains(p.Error, "statement timeout") {
		t.Fatalf("/readyz names %+v; want audit-log, failing_sweeps after exactly 2 failures, the timeout", p)
	}
	if v := metricValue(t, get, `retention_pass_degraded{pass="audit-log",reason="failing_sweeps"}`); v != 1 {
		t.Fatalf("retention_pass_degraded{reason=failing_sweeps} while degraded = %v", v)
	}
	if v := metricValue(t, get, `retention_consecutive_failures{pass="audit-log"}`); v < 2 {
		t.Fatalf("retention_consecutive_failures while degraded = %v, want at least 2", v)
	}
	// status prints the same verdict: nothing answers on node.admin's port 0, so it
	// judges the ledger, whose failed runs land just after the sweeps end (each ask is
	// a whole process, a bounded number of times).
	var line string
	for range 100 {
		if line = healthLine(retention(t, "status", "--config", path).stdout); strings.HasPrefix(line, "health: degraded: audit-log (failing_sweeps") {
			break
		}
	}
	if !strings.HasPrefix(line, "health: degraded: audit-log (failing_sweeps") || !strings.Contains(line, "statement timeout") || !strings.Contains(line, "from the ledger") {
		t.Fatalf("status's health line %q; want the verdict /readyz gives: degraded, audit-log failing its sweeps on the timeout", line)
	}

	e.exec("UPDATE " + e.prefix + "pace SET s = 0")
	waitFor(t, "/readyz to answer 200 after a good sweep", func() bool {
		code, _ := readyzOf(t, get)
		return code == http.StatusOK
	})
	if e.count("id = 5001") != 0 {
		t.Fatal("/readyz is ready again but the good sweep did not delete the expired row")
	}
	if v := metricValue(t, get, `retention_pass_degraded{pass="audit-log",reason="failing_sweeps"}`); v != 0 {
		t.Fatalf("retention_pass_degraded{reason=failing_sweeps} after recovery = %v", v)
	}
	if v := metricValue(t, get, `retention_consecutive_failures{pass="audit-log"}`); v != 0 {
		t.Fatalf("retention_consecutive_failures after recovery = %v", v)
	}
	stopRun(t, n)
}

// healthLine is status's health verdict line, "" when it printed none.
func healthLine(out string) string {
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "health: ") {
			return line
		}
	}
	return ""
}

// stopRun stops a running node with SIGTERM and waits for a clean exit.
func stopRun(t *testing.T, n *runningNode) {
	t.Helper()
	if err := n.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := n.cmd.Wait(); err != nil {
		t.Fatalf("run exited with %v after SIGTERM", err)
	}
}

// documentedMetric is a row of docs/metrics.md's table marked emitted.
type documentedMetric struct{ name, kind, labels string }

var metricRow = regexp.MustCompile("^\\| `(retention_[a-z0-9_]+)` \\| (counter|gauge|histogram) \\| ([^|]+) \\| emitted \\|")

func emittedMetrics(t *testing.T) []documentedMetric {
	t.Helper()
	raw, err := os.ReadFile("../../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	var out []documentedMetric
	for _, line := range strings.Split(string(raw), "\n") {
		if m := metricRow.FindStringSubmatch(line); m != nil {
			out = append(out, documentedMetric{m[1], m[2], m[3]})
		}
	}
	if len(out) < 10 {
		t.Fatalf("docs/metrics.md lists %d emitted metrics", len(out))
	}
	return out
}

// TestEveryMetricExistsAtZeroFromStart scrapes a node whose pass has not swept yet (its
// stagger is an hour): every per-pass counter and event gauge docs/metrics.md marks
// emitted is there for the pass, at zero, every sweep reason and degraded reason too;
// the settings gauges say the pass's settings; the build info and the Go and process
// collectors are there.
func TestEveryMetricExistsAtZeroFromStart(t *testing.T) {
	t.Parallel()
	e := newEnv(t, passes.DriverSQLite)
	e.seed(20)
	path := e.config("    max_startup_stagger: 1h\n    sweep_interval: 2h", "")
	e.edit(path, "    max_startup_stagger: 0s\n", "")
	e.edit(path, "node:\n", "node:\n  admin: 127.0.0.1:0\n")
	n := startRun(t, path)
	get := adminGet(t, n.waitLog(t, "admin endpoint listening", "")["addr"].(string))
	n.waitLog(t, "node running", "")
	_, body := get("/metrics")
	zeroAtStart := map[string]bool{ // what no sweep has moved yet
		"retention_rows_deleted_total": true, "retention_rows_skipped_total": true, "retention_batches_total": true,
		"retention_sweeps_total": true, "retention_failures_total": true, "retention_restarts_total": true,
		"retention_batch_duration_seconds": true, "retention_last_success_timestamp_seconds": true,
		"retention_consecutive_failures": true, "retention_pass_degraded": true,
	}
	// Series this pass cannot have: the table statistics exist on PostgreSQL only (this
	// node is SQLite), the pace gauges for adaptive passes only (this one is fixed).
	notThisPass := func(name string) bool {
		return strings.HasPrefix(name, "retention_table_") || strings.HasPrefix(name, "retention_pace_")
	}
	for _, m := range emittedMetrics(t) {
		if notThisPass(m.name) {
			continue
		}
		if strings.HasPrefix(m.name, "retention_cluster_") {
			continue // registered in cluster mode only (node/cluster's tests and make multinode check them)
		}
		series := m.name
		if m.kind == "histogram" {
			series += "_count"
		}
		var found []string
		for _, line := range strings.Split(body, "\n") {
			if strings.HasPrefix(line, series+"{") || strings.HasPrefix(line, series+" ") {
				if !strings.Contains(m.labels, "pass") || strings.Contains(line, `pass="audit-log"`) {
					found = append(found, line)
				}
			}
		}
		if len(found) == 0 {
			t.Errorf("/metrics has no %s for the pass right after start", series)
			continue
		}
		for _, line := range found {
			if zeroAtStart[m.name] && !strings.HasSuffix(line, " 0") {
				t.Errorf("%s: want 0 before the first sweep", line)
			}
		}
	}
	// Eight sweep outcomes (elsewhere and held among them) and three degraded reasons,
	// each its own series from the start.
	if got := strings.Count(body, `{pass="audit-log",reason=`); got != 8+3 {
		t.Errorf("%d series of the pass with a reason label, want 11", got)
	}
	for series, want := range map[string]float64{
		`retention_pass_retention_seconds{pass="audit-log"}`: 30 * 24 * 3600,
		`retention_pass_interval_seconds{pass="audit-log"}`:  2 * 3600,
		`retention_backlog_rows{pass="audit-log"}`:           float64(e.count("state = 'done' AND id % 10 <> 0 AND id % 50 <> 1")),
	} {
		if got := metricValue(t, get, series); got != want {
			t.Errorf("%s = %v, want %v", series, got, want)
		}
	}
	for _, prefix := range []string{"retention_build_info{goversion=\"go", "go_goroutines ", "process_start_time_seconds "} {
		if !strings.Contains(body, "\n"+prefix) {
			t.Errorf("/metrics has no %s...", prefix)
		}
	}
	stopRun(t, n)
}

// TestHeldRowsMoveTheHeldGaugeNotTheOldestDeletableAge drains a table whose expired rows
// include some on legal hold (a child with on_delete: block): after the drain the rows a
// sweep could delete are none, so the oldest-deletable age reads 0, while the held rows
// are counted, and their age (past the retention) shows on their own gauge.
func TestHeldRowsMoveTheHeldGaugeNotTheOldestDeletableAge(t *testing.T) {
	t.Parallel()
	eachDriver(t, func(t *testing.T, e *env) {
		e.seed(200)
		held := e.count("state = 'done' AND id % 50 = 1")
		if held == 0 {
			t.Fatal("the seed holds no expired row")
		}
		path := e.config("    sweep_interval: 24h", "")
		e.edit(path, "node:\n", "node:\n  admin: 127.0.0.1:0\n")
		n := startRun(t, path)
		get := adminGet(t, n.waitLog(t, "admin endpoint listening", "")["addr"].(string))
		if done := n.waitLog(t, "sweep done", "audit-log"); done["reason"] != "drained" {
			t.Fatalf("the first sweep did not drain: %v", done)
		}
		for series, want := range map[string]float64{
			`retention_backlog_rows{pass="audit-log"}`:                 0,
			`retention_oldest_deletable_age_seconds{pass="audit-log"}`: 0,
			`retention_held_rows{pass="audit-log"}`:                    float64(held),
		} {
			if got := metricValue(t, get, series); got != want {
				t.Errorf("%s = %v, want %v", series, got, want)
			}
		}
		if age := metricValue(t, get, `retention_oldest_held_age_seconds{pass="audit-log"}`); age < 40*24*3600 || age > 41*24*3600 {
			t.Errorf("retention_oldest_held_age_seconds = %v, want the held rows' age (about 40 days)", age)
		}
		stopRun(t, n)
	})
}
