package actors_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/passes/dbtest"
	"github.com/retentionkit/retention/passes/ledger"
)

// TestOneCleanupCycleDeletesEverythingEligible runs the metadata cleanup on a runtime
// with more eligible runs, in two groups, than 100 batches (the pass defaults' bound)
// can take: its first sweep ends drained with none left.
func TestOneCleanupCycleDeletesEverythingEligible(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		l := migratedLedger(t, db)
		old := time.Now().Add(-3 * time.Hour).UTC()
		var values []string
		for i := range 260 {
			name := ledger.NameWorkQueuePoller
			if i%2 == 1 {
				name = "customer-patch"
			}
			values = append(values, fmt.Sprintf("('%s', 'Completed', ?)", name))
		}
		args := make([]any, len(values))
		for i := range args {
			args[i] = old
		}
		if _, err := db.ExecContext(ctx, "INSERT INTO "+l.Prefix()+"metadata (name, state, start_time) VALUES "+strings.Join(values, ", "), args...); err != nil {
			t.Fatal(err)
		}
		plan, err := ledger.CleanupConfig{DeleteBatchSize: 2, Names: []ledger.NameRetention{{Name: "customer-patch", Retention: ptrTo(2 * time.Hour)}}}.Build()
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
		left, err := db.NewSelect().TableExpr(l.Prefix()+"metadata").Where("start_time < ?", old.Add(time.Minute)).Count(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if d.Reason != actors.Drained || d.Rows != 260 || left != 0 {
			t.Fatalf("first cleanup sweep: %s after %d batches, %d rows deleted, %d eligible left; want drained with none left", d.Reason, d.Batches, d.Rows, left)
		}
	})
}

func ptrTo[T any](v T) *T { return &v }
