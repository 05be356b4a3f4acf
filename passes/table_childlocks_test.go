package passes_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/dbtest"
)

// TestTableLockedChildren: another transaction holds FOR UPDATE locks on children of
// three expired rows whose own rows are free: the attachment of 3 (a direct child), the
// blob of 5 (a grandchild) and the review of 7 (a set_null child). The batches delete
// every other row, pass those three over (not skipped, nothing of theirs touched) while
// reporting more waiting, instead of waiting on the locks until the statement timeout;
// once the locks go, the next batch deletes them. With a row an unlisted table holds,
// bisection skips that one and passes over the three alike.
func TestTableLockedChildren(t *testing.T) {
	for _, tc := range []struct {
		name     string
		unlisted bool // log 2 is referenced by an unlisted table: its batch is bisected
	}{{"batches", false}, {"bisected", true}} {
		t.Run(tc.name, func(t *testing.T) {
			db := dbtest.Postgres(t)
			ctx := context.Background()
			f := newFixture(t, db, passes.TimestampNative)
			for id := 1; id <= 12; id++ {
				f.log(id, cutoffT.Add(-time.Duration(id)*time.Minute), "done")
				f.exec("INSERT INTO {p}audit_attachment (id, audit_log_id) VALUES (?, ?)", 100+id, id)
				f.exec("INSERT INTO {p}attachment_blob (id, attachment_id) VALUES (?, ?)", 1000+id, 100+id)
				f.exec("INSERT INTO {p}audit_review (id, audit_log_id) VALUES (?, ?)", 200+id, id)
			}
			wantLeft, wantSkipped := []int64{3, 5, 7}, 0
			if tc.unlisted {
				f.exec("INSERT INTO {p}unlisted (id, audit_log_id) VALUES (1, 2)")
				wantLeft, wantSkipped = []int64{2, 3, 5, 7}, 1
			}
			locker, err := db.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = locker.Rollback() }()
			var locked int
			lock := "SELECT count(*) FROM (SELECT id FROM " + f.p + "audit_attachment WHERE id = 103 UNION ALL SELECT id FROM " + f.p + "attachment_blob WHERE id = 1005 UNION ALL SELECT id FROM " + f.p + "audit_review WHERE id = 207) l"
			if err := locker.QueryRowContext(ctx, lock).Scan(&locked); err != nil || locked != 3 {
				t.Fatalf("%d rows to lock, %v", locked, err)
			}
			for _, q := range []string{"audit_attachment WHERE id = 103", "attachment_blob WHERE id = 1005", "audit_review WHERE id = 207"} {
				if _, err := locker.ExecContext(ctx, "SELECT id FROM "+f.p+q+" FOR UPDATE"); err != nil {
					t.Fatal(err)
				}
			}
			spec := f.spec()
			spec.StatementTimeout = time.Second // a batch waiting on a lock fails instead of hanging
			p, err := f.table(spec).Factory()(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer p.(passes.Closer).Close()

			deleted, skipped, idle := 0, 0, 0
			for batch := 1; idle < 2; batch++ {
				if batch > 10 {
					t.Fatalf("after %d batches: %d deleted, still not idle", batch-1, deleted)
				}
				r := &reporter{}
				n, err := p.PurgeBatch(passes.WithBatchReporter(ctx, r), 4, cutoffT)
				if err != nil {
					t.Fatalf("batch %d: %v", batch, err)
				}
				if n+len(r.skipped) < 4 && !r.more {
					t.Fatalf("batch %d: %d deleted, %d skipped and no more waiting: the sweep would end as drained with rows passed over", batch, n, len(r.skipped))
				}
				deleted, skipped = deleted+n, skipped+len(r.skipped)
				if n == 0 && len(r.skipped) == 0 {
					idle++
				}
			}
			if want := 12 - len(wantLeft); deleted != want || skipped != wantSkipped {
				t.Fatalf("with the children locked: %d deleted, %d skipped; want %d and %d", deleted, skipped, want, wantSkipped)
			}
			if got := f.ids("audit_log"); !slices.Equal(got, wantLeft) {
				t.Fatalf("left %v, want %v", got, wantLeft)
			}
			for table, want := range map[string][]int64{
				"audit_attachment": plus(100, wantLeft), "attachment_blob": plus(1000, wantLeft),
			} {
				if got := f.ids(table); !slices.Equal(got, want) {
					t.Fatalf("%s left %v, want %v (the passed-over rows' children untouched)", table, got, want)
				}
			}
			var cleared int
			if err := db.QueryRowContext(ctx, "SELECT count(*) FROM "+f.p+"audit_review WHERE audit_log_id IS NULL").Scan(&cleared); err != nil || cleared != 12-len(wantLeft) {
				t.Fatalf("%d reviews cleared (%v), want %d: those of the deleted rows only", cleared, err, 12-len(wantLeft))
			}

			if err := locker.Rollback(); err != nil {
				t.Fatal(err)
			}
			if n, more := batchOf(t, p, 4); n != 3 || more {
				t.Fatalf("after the release: %d deleted, more %v; want the 3 passed over and drained", n, more)
			}
			if got := f.ids("audit_log"); !slices.Equal(got, wantLeft[:len(wantLeft)-3]) {
				t.Fatalf("left %v after the release", got)
			}
		})
	}
}

func plus(base int64, ids []int64) []int64 {
	out := make([]int64, len(ids))
	for i, id := range ids {
		out[i] = base + id
	}
	return out
}
