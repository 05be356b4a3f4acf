package passtest

import (
	"context"
	"testing"
	"time"

	"github.com/retentionkit/retention/passes"
)

// childLockBehaviours: another transaction holds locks on children of three expired
// rows whose own rows are free (the attachment of 3, the blob of 5, the review of 7).
// The batches delete every other row and pass those three over, untouched and not
// skipped, while reporting more waiting, instead of waiting on the locks; once the
// locks go, the next batch deletes them. With a row an unlisted table holds, bisection
// skips that one and passes over the three alike.
func childLockBehaviours() []behaviour {
	needLocks := func(t Target) string {
		if t.NoRowLocks {
			return "the database has no row locks to pass over"
		}
		return ""
	}
	return []behaviour{
		{name: "locked children passed over", run: func(t *testing.T, db *DB) { lockedChildren(t, db, false) }, skip: needLocks},
		{name: "locked children passed over when bisected", run: func(t *testing.T, db *DB) { lockedChildren(t, db, true) }, skip: needLocks},
	}
}

func lockedChildren(t *testing.T, db *DB, unlisted bool) {
	ctx := context.Background()
	a := newAudit(t, db, passes.TimestampNative)
	for id := 1; id <= 12; id++ {
		a.log(id, auditCutoff.Add(-time.Duration(id)*time.Minute), "done")
		a.exec("INSERT INTO audit_attachment (id, audit_log_id) VALUES (?, ?)", 100+id, id)
		a.exec("INSERT INTO attachment_blob (id, attachment_id) VALUES (?, ?)", 1000+id, 100+id)
		a.exec("INSERT INTO audit_review (id, audit_log_id) VALUES (?, ?)", 200+id, id)
	}
	wantLeft, wantSkipped := []int64{3, 5, 7}, 0
	if unlisted {
		a.exec("INSERT INTO unlisted (id, audit_log_id) VALUES (1, 2)")
		wantLeft, wantSkipped = []int64{2, 3, 5, 7}, 1
	}
	locker, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = locker.Rollback() })
	for _, q := range []string{"audit_attachment WHERE id = 103", "attachment_blob WHERE id = 1005", "audit_review WHERE id = 207"} {
		if _, err := locker.ExecContext(ctx, "SELECT id FROM "+q+" FOR UPDATE"); err != nil {
			t.Fatal(err)
		}
	}
	spec := a.spec()
	spec.StatementTimeout = time.Second // a batch waiting on a lock fails instead of hanging
	p := openPass(t, a.table(spec))

	deleted, skipped := sweepUntilIdle(t, p)
	if want := 12 - len(wantLeft); deleted != want || skipped != wantSkipped {
		t.Fatalf("with the children locked: %d deleted, %d skipped; want %d and %d", deleted, skipped, want, wantSkipped)
	}
	a.requireIDs("audit_log", wantLeft, "the rows with locked children are passed over")
	a.requireIDs("audit_attachment", plus(100, wantLeft), "the passed-over rows' children are untouched")
	a.requireIDs("attachment_blob", plus(1000, wantLeft), "the passed-over rows' grandchildren are untouched")
	var cleared int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM audit_review WHERE audit_log_id IS NULL").Scan(&cleared); err != nil || cleared != 12-len(wantLeft) {
		t.Fatalf("%d reviews cleared (%v), want %d: those of the deleted rows only", cleared, err, 12-len(wantLeft))
	}
	if err := locker.Rollback(); err != nil {
		t.Fatal(err)
	}
	if n, r := batchOf(t, p, 4); n != 3 || r.more {
		t.Fatalf("after the release: %d deleted, more %v; want the 3 passed over and drained", n, r.more)
	}
	a.requireIDs("audit_log", wantLeft[:len(wantLeft)-3], "the released rows go")
}

// sweepUntilIdle runs batches of 4 until two in a row do nothing, failing the test if a
// short batch would end the sweep as drained while rows were passed over.
func sweepUntilIdle(t *testing.T, p passes.Pass) (deleted, skipped int) {
	t.Helper()
	for batch, idle := 1, 0; idle < 2; batch++ {
		if batch > 10 {
			t.Fatalf("after %d batches: %d deleted, still not idle", batch-1, deleted)
		}
		n, r := batchOf(t, p, 4)
		if n+len(r.skipped) < 4 && !r.more {
			t.Fatalf("batch %d: %d deleted, %d skipped and no more waiting: the sweep would end as drained with rows passed over", batch, n, len(r.skipped))
		}
		deleted, skipped = deleted+n, skipped+len(r.skipped)
		if n == 0 && len(r.skipped) == 0 {
			idle++
		}
	}
	return deleted, skipped
}

func plus(base int64, ids []int64) []int64 {
	out := make([]int64, len(ids))
	for i, id := range ids {
		out[i] = base + id
	}
	return out
}
