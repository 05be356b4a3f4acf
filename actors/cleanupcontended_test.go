package actors_test

import (
	"context"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/passes/dbtest"
	"github.com/retentionkit/retention/passes/ledger"
)

// TestCleanupGroupsWithNothingToPruneDoNotEndTheCycleContended gives the metadata
// cleanup four groups with nothing to prune ahead of the one with runs to prune: each
// of them takes a zero-row batch that says more is waiting, and the cycle must still
// reach the last group and end drained, not contended.
func TestCleanupGroupsWithNothingToPruneDoNotEndTheCycleContended(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		l := migratedLedger(t, db)
		old := time.Now().Add(-6 * time.Hour).UTC()
		for range 3 {
			if _, err := db.ExecContext(ctx, "INSERT INTO "+l.Prefix()+"metadata (name, state, start_time) VALUES ('customer-patch', 'Completed', ?)", old); err != nil {
				t.Fatal(err)
			}
		}
		// The default group first, then by retention: default, a, b, c, customer-patch.
		plan, err := ledger.CleanupConfig{DeleteBatchSize: 2, Names: []ledger.NameRetention{
			{Name: "a", Retention: ptrTo(2 * time.Hour)},
			{Name: "b", Retention: ptrTo(3 * time.Hour)},
			{Name: "c", Retention: ptrTo(4 * time.Hour)},
			{Name: "customer-patch", Retention: ptrTo(5 * time.Hour)},
		}}.Build()
		if err != nil {
			t.Fatal(err)
		}
		n := startNode(t, l, actors.Config{}, ledger.NewCleanup(l, plan).Registration())
		var d actors.SweepDone
		select {
		case d = <-n.done:
		case <-time.After(2 * time.Minute): // a bound on a hang, not a timing assertion
			t.Fatal("the cleanup did not sweep")
		}
		if d.Reason != actors.Drained || d.Rows != 3 {
			t.Fatalf("cleanup sweep: %s after %d batches, %d rows deleted; want drained with the 3 runs pruned", d.Reason, d.Batches, d.Rows)
		}
	})
}
