// End-to-end tests of `run`: triggers, the admin token, and stopping on signals.
package main

import (
	"fmt"
	"io"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/retentionkit/retention/passes"
)

func TestRunTriggerAndAdmin(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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

func TestAdminTokenGuardsMutations(t *testing.T) {
	t.Parallel()
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

// TestASecondSignalCancelsAtOnce holds a batch in the database far longer than the test
// could wait, with a grace period as long: only the second signal's cancellation lets the
// node exit.
func TestASecondSignalCancelsAtOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t, passes.DriverPostgres)
	e.seed(10)
	path := e.config("    where: \"pg_sleep(600) IS NOT NULL\"", "")
	e.edit(path, "shutdown_grace: 10s", "shutdown_grace: 600s")
	n := startRun(t, path)
	n.waitLog(t, "sweep started", "audit-log")
	// "sweep started" comes before the batch reaches the server; a signal in between
	// would find nothing in flight. The server itself waits (up to 7.5 s, under the
	// driver's read timeout) until the batch's statement runs.
	// The statement is this test's own by its table's prefix: other tests run beside it.
	e.exec(`DO $$ BEGIN FOR i IN 1..150 LOOP
		EXIT WHEN EXISTS (SELECT 1 FROM pg_stat_activity WHERE state = 'active' AND datname = current_database() AND pid <> pg_backend_pid() AND query LIKE '%` + e.prefix + `audit_log%pg_sleep(600)%');
		PERFORM pg_sleep(0.05);
		PERFORM pg_stat_clear_snapshot(); -- a transaction sees one snapshot otherwise
	END LOOP; END $$`)
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
