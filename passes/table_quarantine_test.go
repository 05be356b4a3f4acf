package passes_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/core/clock"
	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/dbtest"
	"github.com/retentionkit/retention/passes/ledger"
)

// errReporter keeps the errors of the rows a batch skipped.
type errReporter struct {
	errs []error
	more bool
}

func (r *errReporter) RowSkipped(_ any, err error) { r.errs = append(r.errs, err) }
func (r *errReporter) MoreWaiting()                { r.more = true }

// quarantineSweep runs one sweep like sweep does and returns the deleted count and the
// errors of the rows it reported skipped.
func quarantineSweep(t *testing.T, tbl *passes.Table, batchSize int) (int, []error) {
	t.Helper()
	p, err := tbl.Factory()(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer p.(passes.Closer).Close()
	deleted, batches := 0, 0
	var errs []error
	for {
		r := &errReporter{}
		n, err := p.PurgeBatch(passes.WithBatchReporter(context.Background(), r), batchSize, cutoffT)
		if err != nil {
			t.Fatalf("batch %d: %v", batches+1, err)
		}
		batches++
		deleted += n
		errs = append(errs, r.errs...)
		if (n+len(r.errs) < batchSize && !r.more) || batches > 100 {
			return deleted, errs
		}
	}
}

// quarantineLedger migrates a ledger under a prefix of its own, dropped afterwards.
func quarantineLedger(t *testing.T, db *bun.DB) *ledger.Ledger {
	t.Helper()
	p := newFixturePrefix() + "l_"
	t.Cleanup(func() {
		for _, table := range []string{"quarantine", "backlog_sample", "settings", "dead_letter", "work_queue", "log", "metadata", "node", "migrations", "migration_locks"} {
			_, _ = db.ExecContext(context.Background(), "DROP TABLE IF EXISTS "+p+table)
		}
	})
	if _, err := ledger.Migrate(context.Background(), db, p); err != nil {
		t.Fatal(err)
	}
	l, err := ledger.New(db, p)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func quarantined(t *testing.T, l *ledger.Ledger) []ledger.QuarantinedRow {
	t.Helper()
	rows, err := l.QuarantinedRows(context.Background(), "audit-log")
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// orNil is *s, or "" when s is nil (a quarantine row's column that holds NULL).
func orNil(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// TestTableQuarantine: a row an unlisted table references is reported once, when it
// enters quarantine; later sweeps leave it out until its backoff is over, then try it
// alone, doubling the wait; once the reference is gone the next attempt deletes it and
// it leaves quarantine.
func TestTableQuarantine(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := newFixture(t, db, passes.TimestampNative)
		for id := 1; id <= 10; id++ {
			f.log(id, cutoffT.Add(-time.Duration(id)*time.Hour), "done")
		}
		f.exec("INSERT INTO {p}unlisted (id, audit_log_id) VALUES (1, 6)")
		l := quarantineLedger(t, db)
		clk := clock.NewManual(time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC))
		var summaries []string
		q := l.Quarantine(map[string]time.Duration{"audit-log": time.Hour}).WithClock(clk).WithWarnings(func(s string) { summaries = append(summaries, s) })
		spec := f.spec()
		spec.Children = nil
		tbl := f.table(spec).WithQuarantine(q)

		deleted, errs := quarantineSweep(t, tbl, 4)
		if deleted != 9 || len(errs) != 1 {
			t.Fatalf("first sweep: deleted %d, skipped %v; want 9 and row 6", deleted, errs)
		}
		var rowErr *passes.RowError
		if !errors.As(errs[0], &rowErr) || passes.KeyText(rowErr.Key) != "[6]" {
			t.Fatalf("skipped error = %#v, want a *passes.RowError for [6]", errs[0])
		}
		// Whether a database names the table that holds a row is stated in the conformance
		// suite (bisection area); one that does must name the right table.
		if rowErr.Table != "" && (rowErr.Table != f.p+"unlisted" || !strings.Contains(rowErr.Error(), f.p+"unlisted")) {
			t.Fatalf("row error names table %q, want %s (%v)", rowErr.Table, f.p+"unlisted", rowErr)
		}
		rows := quarantined(t, l)
		if len(rows) != 1 || rows[0].Key != "[6]" || rows[0].Attempts != 1 || !rows[0].NextAttempt.Equal(clk.Now().Add(time.Hour)) {
			t.Fatalf("quarantine = %+v, want [6] once, next attempt in an hour", rows)
		}
		// The quarantine keeps what the row's error named, nothing when it named nothing.
		if orNil(rows[0].ReferencingTable) != rowErr.Table || orNil(rows[0].Constraint) != rowErr.Constraint {
			t.Fatalf("quarantine row = %+v, want the referencing table %q and constraint %q the row's error named", rows[0], rowErr.Table, rowErr.Constraint)
		}

		// Before its next attempt the row is not tried: nothing reported, no attempt counted.
		deleted, errs = quarantineSweep(t, tbl, 4)
		if deleted != 0 || len(errs) != 0 || quarantined(t, l)[0].Attempts != 1 {
			t.Fatalf("second sweep: deleted %d, skipped %v, quarantine %+v; want the row left out", deleted, errs, quarantined(t, l))
		}
		if len(summaries) != 1 || summaries[0] != "1 rows in quarantine for pass audit-log (0 due for another attempt in this sweep)" {
			t.Fatalf("summaries = %q", summaries)
		}

		// Each due attempt that fails is counted, silently, and doubles the wait.
		waits := []time.Duration{time.Hour, 2 * time.Hour, 4 * time.Hour}
		for i, wait := range waits[:2] {
			clk.Advance(wait - time.Second)
			quarantineSweep(t, tbl, 4)
			if got := quarantined(t, l)[0].Attempts; got != int64(i+1) {
				t.Fatalf("a second before the attempt: attempts = %d, want %d", got, i+1)
			}
			clk.Advance(time.Second)
			deleted, errs = quarantineSweep(t, tbl, 4)
			row := quarantined(t, l)[0]
			if deleted != 0 || len(errs) != 0 || row.Attempts != int64(i+2) || !row.NextAttempt.Equal(clk.Now().Add(waits[i+1])) {
				t.Fatalf("attempt %d: deleted %d, skipped %v, row %+v; want it counted silently, next in %v", i+2, deleted, errs, row, waits[i+1])
			}
		}

		f.exec("DELETE FROM {p}unlisted")
		clk.Advance(4 * time.Hour)
		deleted, errs = quarantineSweep(t, tbl, 4)
		if deleted != 1 || len(errs) != 0 || len(quarantined(t, l)) != 0 || len(f.ids("audit_log")) != 0 {
			t.Fatalf("after the reference went: deleted %d, skipped %v, quarantine %+v, left %v", deleted, errs, quarantined(t, l), f.ids("audit_log"))
		}
	})
}

// TestTableQuarantineReleasesVanishedRows: a quarantined row that is gone by its next
// attempt (someone else deleted it) leaves quarantine then.
func TestTableQuarantineReleasesVanishedRows(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := newFixture(t, db, passes.TimestampNative)
		f.log(1, cutoffT.Add(-time.Hour), "done")
		f.log(2, cutoffT.Add(-time.Hour), "done")
		f.exec("INSERT INTO {p}unlisted (id, audit_log_id) VALUES (1, 2)")
		l := quarantineLedger(t, db)
		clk := clock.NewManual(time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC))
		spec := f.spec()
		spec.Children = nil
		tbl := f.table(spec).WithQuarantine(l.Quarantine(nil).WithClock(clk))
		if deleted, errs := quarantineSweep(t, tbl, 10); deleted != 1 || len(errs) != 1 {
			t.Fatalf("first sweep: deleted %d, skipped %v", deleted, errs)
		}
		f.exec("DELETE FROM {p}unlisted")
		f.exec("UPDATE {p}audit_log SET state = 'open'") // no longer matches the filter
		quarantineSweep(t, tbl, 10)
		if len(quarantined(t, l)) != 1 {
			t.Fatal("the row left quarantine before its next attempt")
		}
		clk.Advance(ledger.DefaultQuarantineBackoff)
		if deleted, _ := quarantineSweep(t, tbl, 10); deleted != 0 || len(quarantined(t, l)) != 0 {
			t.Fatalf("deleted %d, quarantine %+v; want the row kept and released", deleted, quarantined(t, l))
		}
		if got := f.ids("audit_log"); len(got) != 1 || got[0] != 2 {
			t.Fatalf("audit_log = %v, want row 2 kept", got)
		}
	})
}

// A row a trigger refuses to delete is quarantined like a referenced one: stated in the
// conformance suite (passes/passtest, quarantine area).

// TestOldestExpiredLeavesQuarantinedRowsOut: once a sweep has put the one row it could
// not delete in quarantine, the table holds no row a sweep could delete, so the
// oldest-deletable age must say none rather than the quarantined row's age forever.
func TestOldestExpiredLeavesQuarantinedRowsOut(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := newFixture(t, db, passes.TimestampNative)
		for id := 1; id <= 4; id++ {
			f.log(id, cutoffT.Add(-time.Duration(id)*time.Hour), "done")
		}
		f.exec("INSERT INTO {p}unlisted (id, audit_log_id) VALUES (1, 4)")
		l := quarantineLedger(t, db)
		spec := f.spec()
		spec.Children = nil
		plain := f.table(spec)
		tbl := plain.WithQuarantine(l.Quarantine(map[string]time.Duration{"audit-log": time.Hour}))
		if deleted, errs := quarantineSweep(t, tbl, 10); deleted != 3 || len(errs) != 1 {
			t.Fatalf("sweep: deleted %d, skipped %v; want 3 and row 4", deleted, errs)
		}
		if _, ok, err := tbl.OldestExpired(context.Background(), cutoffT); err != nil || ok {
			t.Fatalf("with the quarantine: oldest expired found=%v (err %v), want none", ok, err)
		}
		// The same table without its quarantine still sees the row: the exclusion is
		// the quarantine's doing, not the row being gone.
		at, ok, err := plain.OldestExpired(context.Background(), cutoffT)
		if err != nil || !ok || !at.Equal(cutoffT.Add(-4*time.Hour)) {
			t.Fatalf("without the quarantine: oldest expired %v found=%v (err %v), want row 4's time", at, ok, err)
		}
	})
}
