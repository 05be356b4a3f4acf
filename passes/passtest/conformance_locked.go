package passtest

import (
	"context"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes"
)

// lockedBehaviours: rows another transaction holds are passed over, the short batch
// says more rows wait (so the sweep does not end as drained), and they go once
// released; a drained sweep says nothing waits.
func lockedBehaviours() []behaviour {
	needLocks := func(t Target) string {
		if t.NoRowLocks {
			return "the database has no row locks to pass over"
		}
		return ""
	}
	return []behaviour{
		{name: "locked rows passed over in one statement", run: func(t *testing.T, db *DB) { lockedRows(t, db, false) }, skip: needLocks},
		{name: "locked rows passed over with children", run: func(t *testing.T, db *DB) { lockedRows(t, db, true) }, skip: needLocks},
		{name: "rewind leaves skipped rows", run: rewindLeavesSkipped, skip: needLocks},
		{name: "drained sweep reports nothing waiting", run: drainedReportsNothing},
	}
}

// batchOf runs one batch of p at the audit cutoff and returns what it deleted, skipped
// and whether it reported more waiting.
func batchOf(t *testing.T, p passes.Pass, size int) (int, *sweepReporter) {
	t.Helper()
	r := &sweepReporter{}
	n, err := p.PurgeBatch(passes.WithBatchReporter(context.Background(), r), size, auditCutoff)
	if err != nil {
		t.Fatal(err)
	}
	return n, r
}

// lockRows begins a transaction that holds the audit_log rows of ids until it is rolled
// back (at the latest when the test ends).
func lockRows(t *testing.T, db *DB, ids ...int64) bun.Tx {
	t.Helper()
	tx, err := db.BeginTx(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback() })
	if _, err := tx.ExecContext(context.Background(), "SELECT id FROM audit_log WHERE id IN (?) FOR UPDATE", bun.List(ids)); err != nil {
		t.Fatal(err)
	}
	return tx
}

func openPass(t *testing.T, tbl *passes.Table) passes.Pass {
	t.Helper()
	p, err := tbl.Factory()(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := p.(passes.Closer); ok {
		t.Cleanup(func() { _ = c.Close() })
	}
	return p
}

func lockedRows(t *testing.T, db *DB, withChildren bool) {
	a := newAudit(t, db, passes.TimestampNative)
	for id := 1; id <= 10; id++ {
		a.log(id, auditCutoff.Add(-time.Duration(id)*time.Minute), "done")
	}
	spec := a.bare()
	if withChildren {
		spec.Children = []passes.ChildSpec{{Table: "audit_attachment", ForeignKey: "audit_log_id"}}
	}
	tx := lockRows(t, db, 3, 4)
	p := openPass(t, a.table(spec))
	if n, r := batchOf(t, p, 4); n != 4 || r.more {
		t.Fatalf("first batch: %d deleted, more %v; want a full batch of 4", n, r.more)
	}
	if n, _ := batchOf(t, p, 4); n != 4 {
		t.Fatalf("second batch: %d deleted, want 4 (6, 5, 2, 1: it passed over 4 and 3)", n)
	}
	for i := range 2 {
		if n, r := batchOf(t, p, 4); n != 0 || !r.more {
			t.Fatalf("short batch %d while 3 and 4 are locked: %d deleted, more %v; want 0 and more waiting", i+1, n, r.more)
		}
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if n, r := batchOf(t, p, 4); n != 2 || r.more {
		t.Fatalf("after the release: %d deleted, more %v; want the 2 rows and drained", n, r.more)
	}
	a.requireIDs("audit_log", nil, "every expired row goes once released")
}

// rewindLeavesSkipped: after going back for a locked row, the sweep neither bisects
// again nor reports again a row an unlisted table holds.
func rewindLeavesSkipped(t *testing.T, db *DB) {
	a := newAudit(t, db, passes.TimestampNative)
	for id := 1; id <= 6; id++ {
		a.log(id, auditCutoff.Add(-time.Duration(id)*time.Minute), "done")
	}
	a.exec("INSERT INTO unlisted (id, audit_log_id) VALUES (1, 2)")
	tx := lockRows(t, db, 4)
	p := openPass(t, a.table(a.bare()))
	if n, r := batchOf(t, p, 10); n != 4 || len(r.skipped) != 1 || !r.more {
		t.Fatalf("first batch: %d deleted, skipped %v, more %v; want 4, [2], more waiting (4 is locked)", n, r.skipped, r.more)
	}
	if n, r := batchOf(t, p, 10); n != 0 || len(r.skipped) != 0 || !r.more {
		t.Fatalf("while 4 is locked: %d deleted, skipped %v, more %v; want 0, none skipped again, more waiting", n, r.skipped, r.more)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if n, r := batchOf(t, p, 10); n != 1 || len(r.skipped) != 0 || r.more {
		t.Fatalf("after the release: %d deleted, skipped %v, more %v; want 1, none, drained", n, r.skipped, r.more)
	}
	a.requireIDs("audit_log", []int64{2}, "only the row the unlisted table holds stays")
}

// drainedReportsNothing: a sweep that drains, or leaves only rows bisection skipped,
// does not report more waiting, so it ends in the fewest batches.
func drainedReportsNothing(t *testing.T, db *DB) {
	a := newAudit(t, db, passes.TimestampNative)
	for id := 1; id <= 6; id++ {
		a.log(id, auditCutoff.Add(-time.Duration(id)*time.Minute), "done")
	}
	a.log(7, auditCutoff.Add(time.Minute), "done")
	a.exec("INSERT INTO unlisted (id, audit_log_id) VALUES (1, 2)")
	res := Sweep(t, a.table(a.bare()), 4, auditCutoff)
	if res.Deleted != 5 || len(res.Skipped) != 1 || res.Batches != 2 {
		t.Fatalf("sweep = %+v; want 5 deleted, 1 skipped, in 2 batches (no more waiting)", res)
	}
}
