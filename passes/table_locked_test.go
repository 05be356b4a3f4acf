package passes_test

import (
	"context"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/dbtest"
)

// batchOf runs one batch of p and returns what it deleted and whether it reported more
// waiting.
func batchOf(t *testing.T, p passes.Pass, size int) (int, bool) {
	t.Helper()
	r := &reporter{}
	n, err := p.PurgeBatch(passes.WithBatchReporter(context.Background(), r), size, cutoffT)
	if err != nil {
		t.Fatal(err)
	}
	return n, r.more
}

// TestTableReportsLockedRows: rows another transaction holds are passed over by SKIP
// LOCKED; the short batch then reports MoreWaiting (so the sweep does not end as
// drained), every batch does while they stay locked, and the rows go once released.
func TestTableReportsLockedRows(t *testing.T) {
	for _, withChildren := range []bool{false, true} {
		t.Run(map[bool]string{false: "one statement", true: "with children"}[withChildren], func(t *testing.T) {
			db := dbtest.Postgres(t)
			f := newFixture(t, db, passes.TimestampNative)
			for id := 1; id <= 10; id++ {
				f.log(id, cutoffT.Add(-time.Duration(id)*time.Minute), "done")
			}
			spec := passes.TableSpec{Table: f.p + "audit_log", Key: "id", Timestamp: "occurred_at"}
			if withChildren {
				spec.Children = []passes.ChildSpec{{Table: f.p + "audit_attachment", ForeignKey: "audit_log_id"}}
			}
			tx, err := db.BeginTx(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = tx.Rollback() }()
			if _, err := tx.ExecContext(context.Background(), "SELECT id FROM "+f.p+"audit_log WHERE id IN (3, 4) FOR UPDATE"); err != nil {
				t.Fatal(err)
			}
			p, err := f.table(spec).Factory()(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer p.(passes.Closer).Close()

			if n, more := batchOf(t, p, 4); n != 4 || more {
				t.Fatalf("first batch: %d deleted, more %v; want a full batch of 4", n, more)
			}
			if n, _ := batchOf(t, p, 4); n != 4 {
				t.Fatalf("second batch: %d deleted, want 4 (6, 5, 2, 1: it passed over 4 and 3)", n)
			}
			for i := range 2 {
				if n, more := batchOf(t, p, 4); n != 0 || !more {
					t.Fatalf("short batch %d while 3 and 4 are locked: %d deleted, more %v; want 0 and more waiting", i+1, n, more)
				}
			}
			if err := tx.Rollback(); err != nil {
				t.Fatal(err)
			}
			if n, more := batchOf(t, p, 4); n != 2 || more {
				t.Fatalf("after the release: %d deleted, more %v; want the 2 rows and drained", n, more)
			}
			if got := f.ids("audit_log"); len(got) != 0 {
				t.Fatalf("left %v", got)
			}
		})
	}
}

// TestTableDrainedReportsNothing: a sweep that drains, or leaves only rows bisection
// skipped (an unlisted table holds them), does not report more waiting.
func TestTableDrainedReportsNothing(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := newFixture(t, db, passes.TimestampNative)
		for id := 1; id <= 6; id++ {
			f.log(id, cutoffT.Add(-time.Duration(id)*time.Minute), "done")
		}
		f.log(7, cutoffT.Add(time.Minute), "done")
		f.exec("INSERT INTO {p}unlisted (id, audit_log_id) VALUES (1, 2)")
		res := sweep(t, f.table(passes.TableSpec{Table: f.p + "audit_log", Key: "id", Timestamp: "occurred_at"}), 4, cutoffT)
		if res.deleted != 5 || len(res.skipped) != 1 || res.batches != 2 {
			t.Fatalf("sweep = %+v; want 5 deleted, 1 skipped, in 2 batches (no more waiting)", res)
		}
	})
}

// TestTableRewindLeavesSkippedRows: after going back for a locked row, the sweep does
// not bisect again (nor report again) a row an unlisted table holds.
func TestTableRewindLeavesSkippedRows(t *testing.T) {
	db := dbtest.Postgres(t)
	f := newFixture(t, db, passes.TimestampNative)
	for id := 1; id <= 6; id++ {
		f.log(id, cutoffT.Add(-time.Duration(id)*time.Minute), "done")
	}
	f.exec("INSERT INTO {p}unlisted (id, audit_log_id) VALUES (1, 2)")
	tx, err := db.BeginTx(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(context.Background(), "SELECT id FROM "+f.p+"audit_log WHERE id = 4 FOR UPDATE"); err != nil {
		t.Fatal(err)
	}
	p, err := f.table(passes.TableSpec{Table: f.p + "audit_log", Key: "id", Timestamp: "occurred_at"}).Factory()(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer p.(passes.Closer).Close()
	batch := func() (int, *reporter) {
		r := &reporter{}
		n, err := p.PurgeBatch(passes.WithBatchReporter(context.Background(), r), 10, cutoffT)
		if err != nil {
			t.Fatal(err)
		}
		return n, r
	}
	if n, r := batch(); n != 4 || len(r.skipped) != 1 || !r.more {
		t.Fatalf("first batch: %d deleted, skipped %v, more %v; want 4, [2], more waiting (4 is locked)", n, r.skipped, r.more)
	}
	if n, r := batch(); n != 0 || len(r.skipped) != 0 || !r.more {
		t.Fatalf("while 4 is locked: %d deleted, skipped %v, more %v; want 0, none skipped again, more waiting", n, r.skipped, r.more)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if n, r := batch(); n != 1 || len(r.skipped) != 0 || r.more {
		t.Fatalf("after the release: %d deleted, skipped %v, more %v; want 1, none, drained", n, r.skipped, r.more)
	}
	if got := f.ids("audit_log"); len(got) != 1 || got[0] != 2 {
		t.Fatalf("left %v, want [2]", got)
	}
}
