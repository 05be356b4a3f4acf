package passtest

import (
	"context"
	"errors"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/retentionkit/retention/core/clock"
	"github.com/retentionkit/retention/passes"
)

// quarantineBehaviours: the ledger's quarantine store holds a row once with its backoff,
// counts attempts, keeps the constraint and referencing table, says which rows are due,
// and releases them by key, by pass or all at once; a row without culprits is held again
// like any other; and what it does to a table pass's sweeps (quarantineSweepBehaviours).
func quarantineBehaviours() []behaviour {
	return append([]behaviour{
		{name: "store holds, backs off and releases", run: quarantineStore},
		{name: "a row a trigger refuses is quarantined", run: quarantineTrigger},
	}, quarantineSweepBehaviours()...)
}

// quarantineTrigger: a row a trigger refuses to delete is quarantined like a referenced
// one, with the trigger's message, and the other rows of the sweep are deleted.
func quarantineTrigger(t *testing.T, db *DB) {
	if db.KeepRow == nil {
		t.Fatalf("the %s database gives no KeepRow trigger (DB.KeepRow)", db.Driver)
	}
	a := newAudit(t, db, passes.TimestampNative)
	for id := 1; id <= 5; id++ {
		a.log(id, auditCutoff.Add(-time.Hour), "done")
	}
	for _, s := range db.KeepRow("audit_log", 3) {
		a.exec(s)
	}
	l := migratedLedger(t, db)
	q := l.Quarantine(nil).WithClock(clock.NewManual(time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC)))
	res := Sweep(t, a.table(a.bare()).WithQuarantine(q), 10, auditCutoff)
	a.requireIDs("audit_log", []int64{3}, "only the row the trigger refuses stays")
	rows, err := l.QuarantinedRows(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	if res.Deleted != 4 || len(res.Skipped) != 1 || len(rows) != 1 || rows[0].Key != "[3]" || !strings.Contains(rows[0].Error, "kept") {
		t.Fatalf("sweep = %+v, quarantine %+v; want 4 deleted and row 3 quarantined with the trigger's message", res, rows)
	}
}

func quarantineStore(t *testing.T, db *DB) {
	ctx := context.Background()
	l := migratedLedger(t, db)
	start := time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC)
	clk := clock.NewManual(start)
	var warnings []string
	q := l.Quarantine(map[string]time.Duration{"orders": time.Hour}).WithClock(clk).WithWarnings(func(w string) { warnings = append(warnings, w) })
	hold := func(pass string, key []any, err error) bool {
		t.Helper()
		entered, herr := q.Hold(ctx, pass, &passes.RowError{Key: key, Constraint: "orders_customer_fk", Table: "invoices", Err: err})
		if herr != nil {
			t.Fatal(herr)
		}
		return entered
	}
	if !hold("orders", []any{int64(7)}, errors.New("violates foreign key")) {
		t.Fatal("a new row did not enter")
	}
	if !hold("orders", []any{"eu", int64(9)}, errors.New("violates foreign key")) || !hold("audit", []any{int64(7)}, errors.New(strings.Repeat("x", 2000))) {
		t.Fatal("a row of a composite key or another pass did not enter")
	}
	clk.Advance(30 * time.Minute)
	if hold("orders", []any{int64(7)}, errors.New("still violates")) {
		t.Fatal("a quarantined row entered again")
	}
	rows, err := l.QuarantinedRows(ctx, "orders")
	if err != nil || len(rows) != 2 {
		t.Fatalf("rows = %+v, %v", rows, err)
	}
	r := rows[1] // same first_seen: by key, and `"` sorts before `7`
	if r.Key != "[7]" || r.Attempts != 2 || r.Error != "still violates" || !r.FirstSeen.Equal(start) || !r.LastSeen.Equal(start.Add(30*time.Minute)) ||
		!r.NextAttempt.Equal(start.Add(30*time.Minute+2*time.Hour)) || r.Constraint == nil || *r.Constraint != "orders_customer_fk" || r.ReferencingTable == nil || *r.ReferencingTable != "invoices" {
		t.Fatalf("row after two attempts = %+v", r)
	}
	if rows[0].Key != `["eu",9]` || !rows[0].NextAttempt.Equal(start.Add(time.Hour)) {
		t.Fatalf("composite row = %+v", rows[0])
	}
	all, _ := l.QuarantinedRows(ctx, "")
	if len(all) != 3 || all[0].PassName != "audit" || len(all[0].Error) > 510 {
		t.Fatalf("all rows = %+v; want audit's first and its long error cut", all)
	}

	clk.Advance(30 * time.Minute) // the composite row is due, [7] is not
	keys, err := q.Quarantined(ctx, "orders")
	due := map[string]bool{}
	for _, k := range keys {
		due[k.Key] = k.Due
	}
	if err != nil || !maps.Equal(due, map[string]bool{"[7]": false, `["eu",9]`: true}) {
		t.Fatalf("Quarantined = %+v, %v", keys, err)
	}
	if len(warnings) != 1 || warnings[0] != "2 rows in quarantine for pass orders (1 due for another attempt in this sweep)" {
		t.Fatalf("warnings = %q", warnings)
	}

	counts, err := l.QuarantineCounts(ctx)
	if err != nil || !maps.Equal(counts, map[string]int64{"orders": 2, "audit": 1}) {
		t.Fatalf("counts = %v, %v", counts, err)
	}
	if err := q.Release(ctx, "orders", []string{`["eu",9]`, "[8]"}); err != nil {
		t.Fatal(err)
	}
	if n, err := l.ReleaseQuarantined(ctx, "", []string{"[7]"}); err != nil || n != 2 {
		t.Fatalf("release [7] of every pass = %d, %v", n, err)
	}
	counts, _ = l.QuarantineCounts(ctx)
	if len(counts) != 0 {
		t.Fatalf("counts after release = %v", counts)
	}
	hold("orders", []any{int64(1)}, errors.New("e"))
	hold("audit", []any{int64(1)}, errors.New("e"))
	if n, err := l.ReleaseAllQuarantined(ctx, "orders"); err != nil || n != 1 {
		t.Fatalf("release all of orders = %d, %v", n, err)
	}
	if n, err := l.ReleaseAllQuarantined(ctx, ""); err != nil || n != 1 {
		t.Fatalf("release all = %d, %v", n, err)
	}

	// A row whose error names no culprit is held again the same way: its store leaves
	// the culprit columns to their defaults, which an upsert may return (MariaDB's
	// RETURNING returns the kept row), and the kept row must still not count as entered.
	bare := func() bool {
		t.Helper()
		entered, herr := q.Hold(ctx, "bare", &passes.RowError{Key: []any{int64(3)}, Err: errors.New("e")})
		if herr != nil {
			t.Fatal(herr)
		}
		return entered
	}
	if !bare() {
		t.Fatal("a new row without culprits did not enter")
	}
	if bare() {
		t.Fatal("a quarantined row without culprits entered again")
	}
	if rows, err := l.QuarantinedRows(ctx, "bare"); err != nil || len(rows) != 1 || rows[0].Attempts != 2 || rows[0].Constraint != nil {
		t.Fatalf("row without culprits after two attempts = %+v, %v", rows, err)
	}
}
