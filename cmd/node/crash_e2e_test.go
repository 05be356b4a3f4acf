package main

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/ledger"
)

// undercountBound is the most rows the ledger may be behind a node killed mid-drain: the
// batches of one progress interval (1s). The pass below pauses 100ms between batches of
// 50, so at most 10 batches complete in that second.
const undercountBound = 10 * 50

// TestSIGKILLLeavesARunThatRecoveryCloses kills a node mid-drain: its run is still
// InProgress with counts within one progress interval of the rows really gone; a node
// started again closes it as Failed/abandoned once the dead node's heartbeat is stale,
// keeping those counts.
func TestSIGKILLLeavesARunThatRecoveryCloses(t *testing.T) {
	t.Parallel()
	eachDriver(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		e.seed(6000)
		before := e.count("1 = 1")
		path := e.config("    batch_delay: 100ms\n    max_batches_per_sweep: 1000", "")
		if r := retention(t, "migrate", "--config", path); r.code != 0 {
			t.Fatalf("migrate: exit %d: %s", r.code, r.stderr)
		}
		led, err := ledger.New(e.db, e.prefix)
		if err != nil {
			t.Fatal(err)
		}
		lastRun := func() ledger.Run {
			t.Helper()
			runs, err := led.Runs(ctx, "audit-log", 1)
			if err != nil {
				t.Fatal(err)
			}
			if len(runs) == 0 {
				return ledger.Run{}
			}
			return runs[0]
		}

		first := startRun(t, path)
		// Kill between two progress writes: 1,000 rows recorded and more gone since.
		waitFor(t, "the run to record 1,000 rows and delete more", func() bool {
			recorded := lastRun().RowsDeleted
			return recorded >= 1000 && int64(before-e.count("1 = 1")) >= recorded+100
		})
		if err := first.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		_ = first.cmd.Wait()
		killedAt := time.Now()
		deleted := int64(before - e.count("1 = 1"))
		killed := lastRun()
		if killed.State != ledger.InProgress || killed.NodeID == nil {
			t.Fatalf("after SIGKILL the run is %+v, want InProgress with its node", killed)
		}
		if gap := deleted - killed.RowsDeleted; gap < 0 || gap > undercountBound {
			t.Fatalf("after SIGKILL %d rows are gone and the run records %d: off by more than one progress interval (%d)", deleted, killed.RowsDeleted, undercountBound)
		}
		t.Logf("at the kill: %d rows gone, %d recorded in %d batches", deleted, killed.RowsDeleted, killed.Batches)
		if killed.Batches*50 != killed.RowsDeleted {
			t.Fatalf("the run records %d rows in %d batches of 50", killed.RowsDeleted, killed.Batches)
		}

		second := startRun(t, path)
		second.waitLog(t, "node joined the ledger", "")
		var closed ledger.Run
		waitFor(t, "the killed run to be closed", func() bool {
			var r ledger.Run
			err := e.db.NewSelect().Model(&r).ModelTableExpr(e.prefix+"metadata AS run").Where("id = ?", killed.ID).Scan(ctx)
			closed = r
			return err == nil && r.State != ledger.InProgress
		})
		if closed.State != ledger.Failed || closed.StopReason == nil || *closed.StopReason != ledger.StopAbandoned || closed.EndTime == nil {
			t.Fatalf("the killed run was closed as %+v, want Failed/abandoned", closed)
		}
		t.Logf("closed %v after the kill as %s/%s, %d rows recorded", time.Since(killedAt).Round(time.Second), closed.State, *closed.StopReason, closed.RowsDeleted)
		if closed.RowsDeleted != killed.RowsDeleted || deleted-closed.RowsDeleted > undercountBound {
			t.Fatalf("closed with %d rows recorded; %d were recorded at the kill, %d gone", closed.RowsDeleted, killed.RowsDeleted, deleted)
		}
		if err := second.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if err := second.cmd.Wait(); err != nil {
			t.Fatalf("the second node exited with %v after SIGTERM", err)
		}
		var open int
		if err := e.db.QueryRowContext(ctx, "SELECT count(*) FROM "+e.prefix+"metadata WHERE state IN ('InProgress', 'Pending')").Scan(&open); err != nil || open != 0 {
			t.Fatalf("%d runs left open after a clean stop (%v)", open, err)
		}
	})
}

// waitFor polls cond until it holds, failing after two minutes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(2 * time.Minute) // a bound on a hang, not a timing assertion
	for !cond() {
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("gave up waiting for %s", what)
		}
	}
}

// TestObserverFailuresLogTheErrorTextWithoutThePassword makes every ledger insert of the
// pass's runs fail with a message that echoes the DSN's password (PostgreSQL with trust
// authentication accepts and ignores it): the node logs the failure with its text, the
// password masked.
func TestObserverFailuresLogTheErrorTextWithoutThePassword(t *testing.T) {
	t.Parallel()
	e := newEnv(t, passes.DriverPostgres)
	e.seed(10)
	path := e.config("    sweep_interval: 24h", "")
	e.edit(path, "postgres://postgres@", "postgres://postgres:s3cretpw@")
	if r := retention(t, "migrate", "--config", path); r.code != 0 {
		t.Fatalf("migrate: exit %d: %s", r.code, r.stderr)
	}
	fn := e.prefix + "refuse_runs"
	t.Cleanup(func() { _, _ = e.db.ExecContext(context.Background(), "DROP FUNCTION IF EXISTS "+fn+"() CASCADE") })
	e.exec(`CREATE FUNCTION ` + fn + `() RETURNS trigger AS $$ BEGIN
		IF NEW.name = 'audit-log' THEN RAISE EXCEPTION 'refused for postgres://postgres:s3cretpw@db'; END IF;
		RETURN NEW; END $$ LANGUAGE plpgsql`)
	e.exec(`CREATE TRIGGER ` + fn + ` BEFORE INSERT ON ` + e.prefix + `metadata FOR EACH ROW EXECUTE FUNCTION ` + fn + `()`)
	n := startRun(t, path)
	line := n.waitLog(t, "observer failed", "")
	text, _ := line["error"].(string)
	if !strings.Contains(text, "refused for") || strings.Contains(text, "s3cretpw") {
		t.Fatalf("observer failure logged %v: want the error's text, the password masked", line)
	}
	_ = n.cmd.Process.Signal(syscall.SIGTERM)
	_ = n.cmd.Wait()
}
