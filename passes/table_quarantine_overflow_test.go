package passes_test

import (
	"context"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/core/clock"
	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/dbtest"
)

// deleteCounter is a bun query hook that counts the DELETE statements the database was
// sent (a bisection step is one).
type deleteCounter struct{ n atomic.Int64 }

func (c *deleteCounter) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context {
	return ctx
}

func (c *deleteCounter) AfterQuery(_ context.Context, e *bun.QueryEvent) {
	if strings.Contains(strings.ToUpper(e.Query), "DELETE FROM") && !strings.Contains(e.Query, "quarantine") {
		c.n.Add(1)
	}
}

// heldReporter counts, per batch, what a HeldReporter hears.
type heldReporter struct {
	skipped, held int
	more          bool
}

func (r *heldReporter) RowSkipped(any, error) { r.skipped++ }
func (r *heldReporter) MoreWaiting()          { r.more = true }
func (r *heldReporter) RowHeld(any, error)    { r.held++ }

// TestTableQuarantineOverflowNotRebisected: 1,500 expired rows, every one referenced by
// a table the pass does not list, enter quarantine in the first sweep. A second sweep,
// none of them due, leaves the first 1,000 out by key and sets the other 500 aside
// without trying them again: a bounded number of deletes per batch (not a bisection of
// each), none deleted, every one reported held, and their attempts unchanged.
func TestTableQuarantineOverflowNotRebisected(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := newFixture(t, db, passes.TimestampNative)
		f.exec("INSERT INTO {p}audit_log (id, occurred_at, state) SELECT i, ?, 'done' FROM "+series(1500), cutoffT.Add(-time.Hour))
		f.exec("INSERT INTO {p}unlisted (id, audit_log_id) SELECT i, i FROM " + series(1500))
		l := quarantineLedger(t, db)
		clk := clock.NewManual(time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC))
		q := l.Quarantine(map[string]time.Duration{"audit-log": time.Hour}).WithClock(clk)
		spec := f.spec()
		spec.Children = nil
		tbl := f.table(spec).WithQuarantine(q)
		if deleted, errs := quarantineSweep(t, tbl, 100); deleted != 0 || len(errs) != 1500 {
			t.Fatalf("first sweep: deleted %d, skipped %d; want 0 and 1500", deleted, len(errs))
		}

		counter := &deleteCounter{}
		//lint:ignore SA1019 the table already holds db; WithQueryHook's clone would not reach it
		db.AddQueryHook(counter)
		p, err := tbl.Factory()(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer p.(passes.Closer).Close()
		batches, held, skipped, deleted := 0, 0, 0, 0
		for batches < 100 {
			r := &heldReporter{}
			n, err := p.PurgeBatch(passes.WithBatchReporter(context.Background(), r), 100, cutoffT)
			if err != nil {
				t.Fatalf("second sweep, batch %d: %v", batches+1, err)
			}
			batches++
			deleted, held, skipped = deleted+n, held+r.held, skipped+r.skipped
			if n+r.skipped+r.held < 100 && !r.more {
				break
			}
		}
		deletes := counter.n.Load()
		t.Logf("second sweep: %d batches, %d DELETE statements, %d held", batches, deletes, held)
		if deleted != 0 || skipped != 0 || held != 500 {
			t.Errorf("second sweep: deleted %d, skipped %d, held %d; want 0, 0 and the 500 rows past the 1,000 left out by key", deleted, skipped, held)
		}
		// Each batch of held rows may try its one delete; a bisection of 100 rows that are
		// all held would take 199.
		if max := int64(2 * batches); deletes > max {
			t.Errorf("second sweep sent %d DELETE statements over %d batches; want at most %d (the held rows re-bisected)", deletes, batches, max)
		}
		for _, row := range quarantined(t, l) {
			if row.Attempts != 1 {
				t.Fatalf("row %s has %d attempts after a sweep in which it was not due; want 1", row.Key, row.Attempts)
			}
		}
	})
}

// series is a FROM item of the integers 1 to n, as i: a recursive common table
// expression, which every database the tests run on reads alike.
func series(n int) string {
	return "(WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < " + strconv.Itoa(n) + ") SELECT i FROM s) AS s"
}

// TestTableUnlistedReferenceSetAsideWithoutBisection: 1,000 expired rows, one in ten
// referenced by a table the pass does not list. The first sweep finds the referenced
// rows of a failed batch through the foreign key the catalog names, instead of
// bisecting: a bounded number of deletes per batch, the other 900 rows deleted, and
// the 100 held each in quarantine once, with the constraint's table.
func TestTableUnlistedReferenceSetAsideWithoutBisection(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := newFixture(t, db, passes.TimestampNative)
		f.exec("INSERT INTO {p}audit_log (id, occurred_at, state) SELECT i, ?, 'done' FROM "+series(1000), cutoffT.Add(-time.Hour))
		f.exec("INSERT INTO {p}unlisted (id, audit_log_id) SELECT i, i FROM " + series(1000) + " WHERE i % 10 = 3")
		l := quarantineLedger(t, db)
		q := l.Quarantine(map[string]time.Duration{"audit-log": time.Hour}).WithClock(clock.NewManual(time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC)))
		spec := f.spec()
		spec.Children = nil
		tbl := f.table(spec).WithQuarantine(q)

		counter := &deleteCounter{}
		//lint:ignore SA1019 the table already holds db; WithQueryHook's clone would not reach it
		db.AddQueryHook(counter)
		p, err := tbl.Factory()(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer p.(passes.Closer).Close()
		batches, skipped, deleted := 0, 0, 0
		for batches < 100 {
			r := &heldReporter{}
			n, err := p.PurgeBatch(passes.WithBatchReporter(context.Background(), r), 100, cutoffT)
			if err != nil {
				t.Fatalf("batch %d: %v", batches+1, err)
			}
			batches++
			deleted, skipped = deleted+n, skipped+r.skipped+r.held
			if n+r.skipped+r.held < 100 && !r.more {
				break
			}
		}
		deletes := counter.n.Load()
		t.Logf("%d batches, %d DELETE statements, %d deleted, %d held", batches, deletes, deleted, skipped)
		if deleted != 900 || skipped != 100 {
			t.Errorf("deleted %d and held %d, want 900 and 100", deleted, skipped)
		}
		if max := int64(3 * batches); deletes > max {
			t.Errorf("%d DELETE statements over %d batches; want at most %d (a bisection per held row)", deletes, batches, max)
		}
		rows := quarantined(t, l)
		if len(rows) != 100 || rows[0].ReferencingTable == nil || *rows[0].ReferencingTable != f.p+"unlisted" {
			t.Fatalf("quarantine has %d rows (first %+v), want 100 naming %sunlisted", len(rows), rows[0], f.p)
		}
	})
}
