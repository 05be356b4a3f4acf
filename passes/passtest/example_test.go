package passtest_test

import (
	"context"
	"fmt"
	"time"

	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/passtest"
)

// Seed creates a table with rows on both sides of a cutoff; keys do not follow time
// order, so a pass that deletes by key instead of by time is caught.
func ExampleSeed() {
	t := newExampleT() // in a test, the test's *testing.T
	defer t.Close()

	cutoff := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	db := passtest.SQLite(t) // or passtest.Each(t, func(t *testing.T, db *passtest.DB) { ... })
	tbl := passtest.Seed(t, db, passtest.Fixture{
		Table: "jobs", Key: []string{"tenant_id", "id"}, Timestamp: "finished_at",
		Cutoff: cutoff, Expired: 4, Fresh: 2,
		Columns: []passtest.Column{{Name: "state", Type: "TEXT NOT NULL", Value: func(r passtest.Row) any {
			if r.Key[1] == 1 {
				return "running"
			}
			return "done"
		}}},
	})
	fmt.Println("expired:", tbl.Expired)
	fmt.Println("fresh:", tbl.Fresh)
	spec := tbl.Spec()
	fmt.Println(spec.Table, spec.KeyColumns, spec.Timestamp)
	// Output:
	// expired: [(2, 1) (3, 2) (2, 4) (3, 5)]
	// fresh: [(1, 3) (1, 6)]
	// jobs [tenant_id id] finished_at
}

// The assertions read the table and name every key that is where it should not be.
func ExampleTable_RequireLeft() {
	t := newExampleT() // in a test, the test's *testing.T
	defer t.Close()

	cutoff := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	db := passtest.SQLite(t)
	tbl := passtest.Seed(t, db, passtest.Fixture{Table: "sessions", Cutoff: cutoff, Expired: 5, Fresh: 3})
	pass, _ := passes.NewTable(db.DB, "sessions", tbl.Spec())
	p, _ := pass.Factory()(context.Background())
	n, _ := p.PurgeBatch(context.Background(), 3, cutoff) // one batch of three: two expired rows stay
	fmt.Println(n, "deleted")

	tbl.RequireKept(t, tbl.Fresh...) // passes
	tbl.RequireCount(t, 5)           // passes
	tbl.RequireSwept(t)              // fails: not every expired row is gone
	tbl.RequireDeleted(t, passtest.Key{1}, passtest.Key{2})
	// Output:
	// 3 deleted
	// FAIL: sessions: 2 rows that should be deleted are still there: keys 1, 2
	// FAIL: sessions: 2 of 2 rows that should be deleted are still there: keys 1, 2
}
