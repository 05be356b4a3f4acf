package passtest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/core/clock"
	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/ledger"
)

// quarantineSweepBehaviours: what the quarantine does to a table pass's sweeps: a row an
// unlisted table references waits out a doubling backoff and leaves once deleted; a row
// gone by its attempt leaves; quarantined rows are not the oldest a sweep could delete;
// past the keys a batch leaves out, quarantined rows are set aside without a bisection;
// and a batch finds its referenced rows through the catalog instead of bisecting.
func quarantineSweepBehaviours() []behaviour {
	return []behaviour{
		{name: "a referenced row backs off and leaves once deleted", run: quarantineBackoff},
		{name: "a vanished row leaves at its attempt", run: quarantineVanished},
		{name: "oldest expired leaves quarantined rows out", run: quarantineOldest},
		{name: "overflow past the left-out keys is not bisected again", run: quarantineOverflow},
		{name: "unlisted references are set aside without bisection", run: unlistedSetAside},
	}
}

// quarantineStart is the instant the quarantine behaviours' manual clocks start at.
var quarantineStart = time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC)

// heldSweep is what one sweep of quarantineSweepOf reported.
type heldSweep struct {
	deleted, held, batches int
	errs                   []error // of the rows reported skipped
}

// heldReporter hears, per batch, the rows skipped (with their errors) and held.
type heldReporter struct {
	errs []error
	held int
	more bool
}

func (r *heldReporter) RowSkipped(_ any, err error) { r.errs = append(r.errs, err) }
func (r *heldReporter) MoreWaiting()                { r.more = true }
func (r *heldReporter) RowHeld(any, error)          { r.held++ }

// quarantineSweepOf runs one sweep of tbl at auditCutoff as Sweep does, also counting
// the rows the batches held, and keeping the skipped rows' errors.
func quarantineSweepOf(t *testing.T, tbl *passes.Table, batchSize int) heldSweep {
	t.Helper()
	p, err := tbl.Factory()(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := p.(passes.Closer); ok {
		defer c.Close()
	}
	var res heldSweep
	for res.batches < 1000 {
		r := &heldReporter{}
		n, err := p.PurgeBatch(passes.WithBatchReporter(context.Background(), r), batchSize, auditCutoff)
		if err != nil {
			t.Fatalf("batch %d: %v", res.batches+1, err)
		}
		res.batches++
		res.deleted, res.held = res.deleted+n, res.held+r.held
		res.errs = append(res.errs, r.errs...)
		if n+len(r.errs)+r.held < batchSize && !r.more {
			return res
		}
	}
	t.Fatal("the sweep does not end")
	return res
}

// quarantinedOf is the ledger's quarantine rows of the audit-log pass.
func quarantinedOf(t *testing.T, l *ledger.Ledger) []ledger.QuarantinedRow {
	t.Helper()
	rows, err := l.QuarantinedRows(context.Background(), "audit-log")
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// orNil is *s, or "" when s is nil (a quarantine column that holds NULL).
func orNil(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// insertMany inserts the rows 1 to n for which row(i) gives the values (none skips i),
// in statements of a few hundred rows, so no database's recursion or packet limit
// applies.
func (a *audit) insertMany(table string, columns []string, n int, row func(i int) []any) {
	a.t.Helper()
	const chunk = 200
	tuple := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(columns)), ", ") + ")"
	for first := 1; first <= n; first += chunk {
		var tuples []string
		var args []any
		for i := first; i < first+chunk && i <= n; i++ {
			if v := row(i); v != nil {
				tuples, args = append(tuples, tuple), append(args, v...)
			}
		}
		if len(tuples) > 0 {
			a.exec(fmt.Sprintf("INSERT INTO %s (%s) VALUES %s", table, strings.Join(columns, ", "), strings.Join(tuples, ", ")), args...)
		}
	}
}

// expiredLogs inserts n expired audit rows, ids 1 to n.
func (a *audit) expiredLogs(n int) {
	a.t.Helper()
	at := a.stored(auditCutoff.Add(-time.Hour))
	a.insertMany("audit_log", []string{"id", "occurred_at", "state"}, n, func(i int) []any { return []any{i, at, "done"} })
}

// deleteCounter is a query hook counting the DELETE statements sent to the pass's
// tables and those the database refused, leaving the ledger's out. A bisection is a
// chain of refused DELETEs (one per step), whatever shape a driver gives its batch's
// deletes (one statement per batch, or one per key), so the refused ones are what the
// behaviours bound.
type deleteCounter struct{ n, refused atomic.Int64 }

func (c *deleteCounter) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context {
	return ctx
}

func (c *deleteCounter) AfterQuery(_ context.Context, e *bun.QueryEvent) {
	// "DELETE FROM" anywhere (a CTE's delete), or a statement that starts with DELETE
	// (MySQL's join delete, DELETE t FROM (keys) ...).
	q := strings.ToUpper(e.Query)
	isDelete := strings.Contains(q, "DELETE FROM") || strings.HasPrefix(strings.TrimSpace(q), "DELETE ")
	if isDelete && !strings.Contains(e.Query, ledgerPrefix) {
		c.n.Add(1)
		if e.Err != nil {
			c.refused.Add(1)
		}
	}
}

// countDeletes starts counting the DELETE statements db is sent.
func countDeletes(db *DB) *deleteCounter {
	c := &deleteCounter{}
	//lint:ignore SA1019 the table already holds db; WithQueryHook's clone would not reach it
	db.AddQueryHook(c)
	return c
}

// quarantineBackoff: a row an unlisted table references is reported once, when it enters
// quarantine; later sweeps leave it out until its backoff is over, then try it alone,
// doubling the wait; once the reference is gone the next attempt deletes it and it
// leaves quarantine.
func quarantineBackoff(t *testing.T, db *DB) {
	a := newAudit(t, db, passes.TimestampNative)
	for id := 1; id <= 10; id++ {
		a.log(id, auditCutoff.Add(-time.Duration(id)*time.Hour), "done")
	}
	a.exec("INSERT INTO unlisted (id, audit_log_id) VALUES (1, 6)")
	l := migratedLedger(t, db)
	clk := clock.NewManual(quarantineStart)
	var summaries []string
	q := l.Quarantine(map[string]time.Duration{"audit-log": time.Hour}).WithClock(clk).WithWarnings(func(s string) { summaries = append(summaries, s) })
	tbl := a.table(a.bare()).WithQuarantine(q)

	res := quarantineSweepOf(t, tbl, 4)
	if res.deleted != 9 || len(res.errs) != 1 {
		t.Fatalf("first sweep: deleted %d, skipped %v; want 9 and row 6", res.deleted, res.errs)
	}
	var rowErr *passes.RowError
	if !errors.As(res.errs[0], &rowErr) || passes.KeyText(rowErr.Key) != "[6]" {
		t.Fatalf("skipped error = %#v, want a *passes.RowError for [6]", res.errs[0])
	}
	// Whether a database names the table that holds a row is the bisection area's; one
	// that does must name the right table.
	if rowErr.Table != "" && (rowErr.Table != "unlisted" || !strings.Contains(rowErr.Error(), "unlisted")) {
		t.Fatalf("row error names table %q, want unlisted (%v)", rowErr.Table, rowErr)
	}
	rows := quarantinedOf(t, l)
	if len(rows) != 1 || rows[0].Key != "[6]" || rows[0].Attempts != 1 || !rows[0].NextAttempt.Equal(clk.Now().Add(time.Hour)) {
		t.Fatalf("quarantine = %+v, want [6] once, next attempt in an hour", rows)
	}
	if orNil(rows[0].ReferencingTable) != rowErr.Table || orNil(rows[0].Constraint) != rowErr.Constraint {
		t.Fatalf("quarantine row = %+v, want the referencing table %q and constraint %q the row's error named", rows[0], rowErr.Table, rowErr.Constraint)
	}

	// Before its next attempt the row is not tried: nothing reported, no attempt counted.
	res = quarantineSweepOf(t, tbl, 4)
	if res.deleted != 0 || len(res.errs) != 0 || quarantinedOf(t, l)[0].Attempts != 1 {
		t.Fatalf("second sweep: deleted %d, skipped %v, quarantine %+v; want the row left out", res.deleted, res.errs, quarantinedOf(t, l))
	}
	if len(summaries) != 1 || summaries[0] != "1 rows in quarantine for pass audit-log (0 due for another attempt in this sweep)" {
		t.Fatalf("summaries = %q", summaries)
	}

	// Each due attempt that fails is counted, silently, and doubles the wait.
	waits := []time.Duration{time.Hour, 2 * time.Hour, 4 * time.Hour}
	for i, wait := range waits[:2] {
		clk.Advance(wait - time.Second)
		quarantineSweepOf(t, tbl, 4)
		if got := quarantinedOf(t, l)[0].Attempts; got != int64(i+1) {
			t.Fatalf("a second before the attempt: attempts = %d, want %d", got, i+1)
		}
		clk.Advance(time.Second)
		res = quarantineSweepOf(t, tbl, 4)
		row := quarantinedOf(t, l)[0]
		if res.deleted != 0 || len(res.errs) != 0 || row.Attempts != int64(i+2) || !row.NextAttempt.Equal(clk.Now().Add(waits[i+1])) {
			t.Fatalf("attempt %d: deleted %d, skipped %v, row %+v; want it counted silently, next in %v", i+2, res.deleted, res.errs, row, waits[i+1])
		}
	}

	a.exec("DELETE FROM unlisted")
	clk.Advance(4 * time.Hour)
	res = quarantineSweepOf(t, tbl, 4)
	if res.deleted != 1 || len(res.errs) != 0 || len(quarantinedOf(t, l)) != 0 || len(a.ids("audit_log")) != 0 {
		t.Fatalf("after the reference went: deleted %d, skipped %v, quarantine %+v, left %v", res.deleted, res.errs, quarantinedOf(t, l), a.ids("audit_log"))
	}
}

// quarantineVanished: a quarantined row that no longer matches by its next attempt
// (someone else changed it) leaves quarantine then, and stays in place.
func quarantineVanished(t *testing.T, db *DB) {
	a := newAudit(t, db, passes.TimestampNative)
	a.log(1, auditCutoff.Add(-time.Hour), "done")
	a.log(2, auditCutoff.Add(-time.Hour), "done")
	a.exec("INSERT INTO unlisted (id, audit_log_id) VALUES (1, 2)")
	l := migratedLedger(t, db)
	clk := clock.NewManual(quarantineStart)
	spec := a.spec()
	spec.Children = nil
	tbl := a.table(spec).WithQuarantine(l.Quarantine(nil).WithClock(clk))
	if res := quarantineSweepOf(t, tbl, 10); res.deleted != 1 || len(res.errs) != 1 {
		t.Fatalf("first sweep: deleted %d, skipped %v", res.deleted, res.errs)
	}
	a.exec("DELETE FROM unlisted")
	a.exec("UPDATE audit_log SET state = 'open'") // no longer matches the filter
	quarantineSweepOf(t, tbl, 10)
	if len(quarantinedOf(t, l)) != 1 {
		t.Fatal("the row left quarantine before its next attempt")
	}
	clk.Advance(ledger.DefaultQuarantineBackoff)
	if res := quarantineSweepOf(t, tbl, 10); res.deleted != 0 || len(quarantinedOf(t, l)) != 0 {
		t.Fatalf("deleted %d, quarantine %+v; want the row kept and released", res.deleted, quarantinedOf(t, l))
	}
	a.requireIDs("audit_log", []int64{2}, "the row no longer matches the filter")
}

// quarantineOldest: once a sweep has put the one row it could not delete in
// quarantine, the table holds no row a sweep could delete, so the oldest-deletable age
// says none rather than the quarantined row's age forever; the same table without its
// quarantine still sees the row.
func quarantineOldest(t *testing.T, db *DB) {
	a := newAudit(t, db, passes.TimestampNative)
	for id := 1; id <= 4; id++ {
		a.log(id, auditCutoff.Add(-time.Duration(id)*time.Hour), "done")
	}
	a.exec("INSERT INTO unlisted (id, audit_log_id) VALUES (1, 4)")
	l := migratedLedger(t, db)
	plain := a.table(a.bare())
	tbl := plain.WithQuarantine(l.Quarantine(map[string]time.Duration{"audit-log": time.Hour}))
	if res := quarantineSweepOf(t, tbl, 10); res.deleted != 3 || len(res.errs) != 1 {
		t.Fatalf("sweep: deleted %d, skipped %v; want 3 and row 4", res.deleted, res.errs)
	}
	if _, ok, err := tbl.OldestExpired(context.Background(), auditCutoff); err != nil || ok {
		t.Fatalf("with the quarantine: oldest expired found=%v (err %v), want none", ok, err)
	}
	at, ok, err := plain.OldestExpired(context.Background(), auditCutoff)
	if err != nil || !ok || !at.Equal(auditCutoff.Add(-4*time.Hour)) {
		t.Fatalf("without the quarantine: oldest expired %v found=%v (err %v), want row 4's time", at, ok, err)
	}
}

// quarantineOverflow: 1,500 expired rows, every one referenced by a table the pass does
// not list, enter quarantine in the first sweep. A second sweep, none of them due,
// leaves the first 1,000 out by key and sets the other 500 aside without trying them
// again: a bounded number of deletes per batch (not a bisection of each), none deleted,
// every one reported held, and their attempts unchanged.
func quarantineOverflow(t *testing.T, db *DB) {
	a := newAudit(t, db, passes.TimestampNative)
	a.expiredLogs(1500)
	a.insertMany("unlisted", []string{"id", "audit_log_id"}, 1500, func(i int) []any { return []any{i, i} })
	l := migratedLedger(t, db)
	q := l.Quarantine(map[string]time.Duration{"audit-log": time.Hour}).WithClock(clock.NewManual(quarantineStart))
	tbl := a.table(a.bare()).WithQuarantine(q)
	if res := quarantineSweepOf(t, tbl, 100); res.deleted != 0 || len(res.errs) != 1500 {
		t.Fatalf("first sweep: deleted %d, skipped %d; want 0 and 1500", res.deleted, len(res.errs))
	}

	counter := countDeletes(db)
	res := quarantineSweepOf(t, tbl, 100)
	refused := counter.refused.Load()
	t.Logf("second sweep: %d batches, %d DELETE statements (%d refused), %d held", res.batches, counter.n.Load(), refused, res.held)
	if res.deleted != 0 || len(res.errs) != 0 || res.held != 500 {
		t.Errorf("second sweep: deleted %d, skipped %d, held %d; want 0, 0 and the 500 rows past the 1,000 left out by key", res.deleted, len(res.errs), res.held)
	}
	// Each batch of held rows may try its one delete; a bisection of 100 rows that are
	// all held would have 199 refused.
	if most := int64(2 * res.batches); refused > most {
		t.Errorf("second sweep had %d DELETE statements refused over %d batches; want at most %d (the held rows bisected again)", refused, res.batches, most)
	}
	for _, row := range quarantinedOf(t, l) {
		if row.Attempts != 1 {
			t.Fatalf("row %s has %d attempts after a sweep in which it was not due; want 1", row.Key, row.Attempts)
		}
	}
}

// unlistedSetAside: 1,000 expired rows, one in ten referenced by a table the pass does
// not list. The sweep finds the referenced rows of a failed batch through the foreign
// key the catalog names, instead of bisecting: a bounded number of deletes per batch,
// the other 900 rows deleted, and the 100 held each in quarantine once, with the
// referencing table the catalog named.
func unlistedSetAside(t *testing.T, db *DB) {
	a := newAudit(t, db, passes.TimestampNative)
	a.expiredLogs(1000)
	a.insertMany("unlisted", []string{"id", "audit_log_id"}, 1000, func(i int) []any {
		if i%10 != 3 {
			return nil
		}
		return []any{i, i}
	})
	l := migratedLedger(t, db)
	q := l.Quarantine(map[string]time.Duration{"audit-log": time.Hour}).WithClock(clock.NewManual(quarantineStart))
	tbl := a.table(a.bare()).WithQuarantine(q)

	counter := countDeletes(db)
	res := quarantineSweepOf(t, tbl, 100)
	refused := counter.refused.Load()
	set := len(res.errs) + res.held
	t.Logf("%d batches, %d DELETE statements (%d refused), %d deleted, %d set aside", res.batches, counter.n.Load(), refused, res.deleted, set)
	if res.deleted != 900 || set != 100 {
		t.Errorf("deleted %d and set aside %d, want 900 and 100", res.deleted, set)
	}
	// A batch's delete is refused once, then the referenced rows are set aside; a
	// bisection would have several refused per held row.
	if most := int64(2 * res.batches); refused > most {
		t.Errorf("%d DELETE statements refused over %d batches; want at most %d (a bisection per held row)", refused, res.batches, most)
	}
	rows := quarantinedOf(t, l)
	if len(rows) != 100 {
		t.Fatalf("quarantine has %d rows, want 100", len(rows))
	}
	if got := orNil(rows[0].ReferencingTable); got != "unlisted" {
		t.Fatalf("quarantine row %+v names %q, want unlisted (the catalog's foreign key found it)", rows[0], got)
	}
}
