package passtest

import (
	"context"
	"testing"
	"time"

	"github.com/retentionkit/retention/passes"
)

// cutoffBehaviours: a row strictly older than the cutoff is expired, in every timestamp
// format, and the cutoff is fixed for a whole sweep.
func cutoffBehaviours() []behaviour {
	var bs []behaviour
	for _, format := range []passes.TimestampFormat{passes.TimestampNative, passes.TimestampUnixSeconds, passes.TimestampUnixMillis} {
		bs = append(bs, behaviour{name: "exact in format " + string(format), run: func(t *testing.T, db *DB) { cutoffExact(t, db, format) }})
	}
	for _, format := range []passes.TimestampFormat{passes.TimestampNative, passes.TimestampUnixMillis} {
		bs = append(bs, behaviour{name: "oldest expired in format " + string(format), run: func(t *testing.T, db *DB) { oldestExpired(t, db, format) }})
	}
	return append(bs, behaviour{name: "fixed for the whole sweep", run: cutoffFixed})
}

// cutoffExact sweeps at a cutoff between whole seconds: rounding must be exact, and a
// row exactly at the cutoff is kept.
func cutoffExact(t *testing.T, db *DB, format passes.TimestampFormat) {
	a := newAudit(t, db, format)
	cut := auditCutoff.Add(500 * time.Millisecond)
	a.log(1, auditCutoff.Add(-time.Second), "done")
	a.log(2, auditCutoff, "done") // half a second before the cutoff: expired
	a.log(3, auditCutoff.Add(time.Second), "done")
	a.log(4, auditCutoff.Add(2*time.Second), "done")
	want := []int64{3, 4}
	if format != passes.TimestampUnixSeconds {
		a.log(5, cut.Add(-time.Millisecond), "done") // a millisecond before: expired
		a.log(6, cut, "done")                        // exactly at the cutoff: kept
		want = []int64{3, 4, 6}
	}
	Sweep(t, a.table(a.bare()), 10, cut)
	a.requireIDs("audit_log", want, "only rows strictly older than the cutoff go")
}

// oldestExpired finds the oldest row the filter lets through, and nothing in an empty table.
func oldestExpired(t *testing.T, db *DB, format passes.TimestampFormat) {
	a := newAudit(t, db, format)
	tbl := a.table(a.spec())
	if _, ok, err := tbl.OldestExpired(context.Background(), auditCutoff); ok || err != nil {
		t.Fatalf("empty table: %v, %v", ok, err)
	}
	a.log(1, auditCutoff.Add(-2*time.Hour), "pending") // filtered out
	a.log(2, auditCutoff.Add(-time.Hour), "done")
	a.log(3, auditCutoff.Add(-time.Minute), "done")
	at, ok, err := tbl.OldestExpired(context.Background(), auditCutoff)
	if err != nil || !ok || !at.Equal(auditCutoff.Add(-time.Hour)) {
		t.Fatalf("OldestExpired = %v, %v, %v; want %v", at, ok, err, auditCutoff.Add(-time.Hour))
	}
}

// cutoffFixed writes rows after the sweep's cutoff while it runs (the clock moved on):
// the later batches keep them.
func cutoffFixed(t *testing.T, db *DB) {
	a := newAudit(t, db, passes.TimestampNative)
	for id := 1; id <= 6; id++ {
		a.log(id, auditCutoff.Add(-time.Duration(id)*time.Hour), "done")
	}
	p, err := a.table(a.spec()).Factory()(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if n, err := p.PurgeBatch(context.Background(), 3, auditCutoff); n != 3 || err != nil {
		t.Fatalf("first batch = %d, %v", n, err)
	}
	a.log(100, auditCutoff.Add(time.Minute), "done")
	a.log(101, auditCutoff.Add(time.Millisecond), "done")
	for {
		n, err := p.PurgeBatch(context.Background(), 3, auditCutoff)
		if err != nil {
			t.Fatal(err)
		}
		if n < 3 {
			break
		}
	}
	a.requireIDs("audit_log", []int64{100, 101}, "rows written after the cutoff survive the sweep")
}
