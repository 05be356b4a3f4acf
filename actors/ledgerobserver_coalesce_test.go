package actors_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/ledger"
)

// TestCoalescedRequestsCountTheSweepOnce serves three requested runs with one sweep of
// two batches (40 rows): the ledger's rows_deleted summed over the three is 40, on the
// first run, and the two others end in the same state with a log row naming it. Each
// run used to get the whole sweep's counts, so the ledger said 120 where the table
// lost 40 (the multi-process suite's drain once read 1,040,000 for 1,000,000).
func TestCoalescedRequestsCountTheSweepOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := passes.Open(ctx, passes.DriverSQLite, filepath.Join(t.TempDir(), "ledger.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := ledger.Migrate(ctx, db, "r_"); err != nil {
		t.Fatal(err)
	}
	led, _ := ledger.New(db, "r_")
	at := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	var ids []int64
	for range 3 {
		c, err := led.RequestSweep(ctx, "p", at)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, c.RunID)
	}
	// Every progress write at once: an interval of a nanosecond on the wall clock.
	o := &actors.LedgerObserver{Ledger: led, ProgressInterval: time.Nanosecond}
	for _, e := range []actors.Event{
		actors.SweepStarted{Name: "p", Sweep: 1, Cutoff: at.Add(-time.Hour), At: at, Runs: ids},
		actors.BatchDone{Name: "p", Sweep: 1, Batch: 1, Rows: 20},
		actors.BatchDone{Name: "p", Sweep: 1, Batch: 2, Rows: 20},
		actors.SweepDone{Name: "p", Sweep: 1, Rows: 40, Batches: 2, Reason: actors.Drained, At: at.Add(time.Second)},
	} {
		if err := o.Observe(e); err != nil {
			t.Fatalf("%T: %v", e, err)
		}
	}
	runs, err := led.Runs(ctx, "p", 10)
	if err != nil {
		t.Fatal(err)
	}
	var sum int64
	for _, r := range runs {
		sum += r.RowsDeleted
		if r.State != ledger.Completed {
			t.Errorf("run %d: %s; want every served run completed", r.ID, r.State)
		}
		if r.ID == ids[0] && (r.RowsDeleted != 40 || r.Batches != 2) {
			t.Errorf("the sweep's own run %d: %d rows in %d batches; want 40 in 2", r.ID, r.RowsDeleted, r.Batches)
		}
	}
	if len(runs) != 3 || sum != 40 {
		t.Fatalf("%d runs summing to %d rows deleted; want 3 summing to the sweep's 40: %+v", len(runs), sum, runs)
	}
	want := fmt.Sprintf("served by run %d, which counts the sweep's rows", ids[0])
	for _, id := range ids[1:] {
		logs, err := led.Logs(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if len(logs) != 1 || logs[0].Message != want {
			t.Errorf("run %d's log %+v; want one row naming run %d", id, logs, ids[0])
		}
	}
}
