package actors_test

import (
	"context"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/core/clock"
	"github.com/retentionkit/retention/passes/dbtest"
	"github.com/retentionkit/retention/passes/ledger"
)

// TestLedgerRecordsProgressAtABoundedRate feeds the observer a sweep's events on a
// manual clock: the run's counts reach the ledger as batches complete, never twice
// within ProgressInterval, and whole at the end.
func TestLedgerRecordsProgressAtABoundedRate(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		l := migratedLedger(t, db)
		start := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
		clk := clock.NewManual(start)
		o := &actors.LedgerObserver{Ledger: l, Clock: clk}
		observe := func(e actors.Event) {
			t.Helper()
			if err := o.Observe(e); err != nil {
				t.Fatal(err)
			}
		}
		recorded := func() ledger.Run {
			t.Helper()
			runs, err := l.Runs(ctx, "audit-log", 1)
			if err != nil || len(runs) != 1 {
				t.Fatalf("runs = %v, %v", runs, err)
			}
			return runs[0]
		}
		observe(actors.SweepStarted{Name: "audit-log", Sweep: 1, Cutoff: start, At: start})
		steps := []struct {
			after       time.Duration // since the previous batch
			rows        int
			skipped     int
			wantRows    int64 // recorded after the batch
			wantBatches int64
			wantSkipped int64
		}{
			{300 * time.Millisecond, 50, 0, 0, 0, 0},   // 0.3s: within the interval of the start
			{400 * time.Millisecond, 50, 1, 0, 0, 0},   // 0.7s
			{300 * time.Millisecond, 50, 0, 150, 3, 1}, // 1.0s: written
			{500 * time.Millisecond, 50, 0, 150, 3, 1}, // 1.5s: within the interval of the last write
			{600 * time.Millisecond, 20, 0, 220, 5, 1}, // 2.1s: written
		}
		for i, s := range steps {
			clk.Advance(s.after)
			for range s.skipped {
				observe(actors.RowSkipped{Name: "audit-log", Sweep: 1, Key: i, Err: context.Canceled})
			}
			observe(actors.BatchDone{Name: "audit-log", Sweep: 1, Batch: i + 1, Rows: s.rows})
			r := recorded()
			if r.State != ledger.InProgress || r.RowsDeleted != s.wantRows || r.Batches != s.wantBatches || r.RowsSkipped != s.wantSkipped {
				t.Fatalf("after batch %d: %d rows, %d batches, %d skipped (%s); want %d, %d, %d", i+1, r.RowsDeleted, r.Batches, r.RowsSkipped, r.State, s.wantRows, s.wantBatches, s.wantSkipped)
			}
		}
		observe(actors.SweepDone{Name: "audit-log", Sweep: 1, Rows: 220, Skipped: 1, Batches: 5, Reason: actors.Drained, At: clk.Now()})
		if r := recorded(); r.State != ledger.Completed || r.RowsDeleted != 220 || r.Batches != 5 {
			t.Fatalf("finished run = %+v", r)
		}
	})
}
