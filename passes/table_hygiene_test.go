package passes_test

import (
	"context"
	"testing"
	"time"

	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/dbtest"
)

// sweepAll drains the table with one sweep of the pass and closes it, as the runtime
// does at a sweep's end.
func sweepAll(t *testing.T, tbl *passes.Table) {
	t.Helper()
	ctx := context.Background()
	p, err := tbl.Factory()(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for {
		n, err := p.PurgeBatch(ctx, 100, cutoffT)
		if err != nil {
			t.Fatal(err)
		}
		if n < 100 {
			break
		}
	}
	if err := p.(passes.Closer).Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

// pgTableStats reads the cumulative statistics of the fixture's audit_log, taking a new
// snapshot each time (the statistics are cached for the transaction otherwise).
type pgTableStats struct {
	deleted                 int64
	lastAnalyze, lastVacuum *time.Time
}

func readPGStats(t *testing.T, f *fixture) pgTableStats {
	t.Helper()
	ctx := context.Background()
	if _, err := f.db.ExecContext(ctx, "SELECT pg_stat_clear_snapshot()"); err != nil {
		t.Fatal(err)
	}
	var s pgTableStats
	err := f.db.QueryRowContext(ctx, "SELECT n_tup_del, last_analyze, last_vacuum FROM pg_stat_user_tables WHERE relname = ?", f.p+"audit_log").
		Scan(&s.deleted, &s.lastAnalyze, &s.lastVacuum)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// hygieneFixture is the audit table with rows, expired of them, analyzed once (so the
// size estimate is known), with autovacuum off for it so that only the sweep analyzes.
func hygieneFixture(t *testing.T, rows, expired int) (*fixture, passes.TableSpec) {
	t.Helper()
	db := dbtest.Postgres(t)
	f := newFixture(t, db, passes.TimestampNative)
	f.exec("ALTER TABLE {p}audit_log SET (autovacuum_enabled = false)")
	f.exec("INSERT INTO {p}audit_log (id, occurred_at, state) SELECT i, ?::timestamptz - CASE WHEN i <= ? THEN interval '1 hour' ELSE interval '-1 hour' END, 'done' FROM generate_series(1, ?) AS i",
		cutoffT, expired, rows)
	f.exec("ANALYZE {p}audit_log")
	spec := f.spec()
	spec.Children = nil
	return f, spec
}

// waitPGStats polls the statistics until ok holds (the deletes reach them when the
// sweep's backend reports, within about a second), failing after a bound on a hang.
func waitPGStats(t *testing.T, f *fixture, ok func(pgTableStats) bool) pgTableStats {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		s := readPGStats(t, f)
		if ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("statistics still %+v after 30s", s)
		}
		<-tick.C
	}
}

func TestAnalyzeAfterABigSweepOnly(t *testing.T) {
	cases := []struct {
		name            string
		rows, expired   int
		share           float64
		vacuum, analyze bool
	}{
		{"half the table: analyzed", 1000, 500, 0, false, true},
		{"one percent: not analyzed", 1000, 10, 0, false, false},
		{"one percent over a lower share: analyzed", 1000, 10, 0.005, false, true},
		{"hygiene off: not analyzed", 1000, 500, -1, false, false},
		{"vacuum_after: analyzed and vacuumed", 1000, 500, 0, true, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, spec := hygieneFixture(t, c.rows, c.expired)
			spec.AnalyzeAfterShare, spec.VacuumAfter = c.share, c.vacuum
			before := waitPGStats(t, f, func(s pgTableStats) bool { return s.lastAnalyze != nil })
			sweepAll(t, f.table(spec))
			if got := len(f.ids("audit_log")); got != c.rows-c.expired {
				t.Fatalf("%d rows left, want %d", got, c.rows-c.expired)
			}
			// ANALYZE and VACUUM report their time when they end, which is before Close
			// returns; the deletes reach the statistics a little later, so once they have,
			// the snapshot is one taken after the sweep.
			after := waitPGStats(t, f, func(s pgTableStats) bool { return s.deleted >= before.deleted+int64(c.expired) })
			if analyzed := after.lastAnalyze.After(*before.lastAnalyze); analyzed != c.analyze {
				t.Fatalf("last_analyze %v -> %v: analyzed = %v, want %v", before.lastAnalyze, after.lastAnalyze, analyzed, c.analyze)
			}
			if vacuumed := after.lastVacuum != nil; vacuumed != c.vacuum {
				t.Fatalf("last_vacuum %v: vacuumed = %v, want %v", after.lastVacuum, vacuumed, c.vacuum)
			}
		})
	}
}

// TestSQLiteHygiene: a sweep that deletes most of a SQLite table refreshes its
// statistics (sqlite_stat1) with PRAGMA optimize, and with vacuum_after gives the freed
// pages back on a database that uses incremental auto-vacuum.
func TestSQLiteHygiene(t *testing.T) {
	ctx := context.Background()
	db := dbtest.SQLite(t)
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, "PRAGMA auto_vacuum = INCREMENTAL"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "VACUUM"); err != nil { // auto_vacuum takes effect on an existing file after a VACUUM
		t.Fatal(err)
	}
	f := newFixture(t, db, passes.TimestampNative)
	f.exec("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000) INSERT INTO {p}audit_log (id, occurred_at, state) SELECT i, CASE WHEN i <= 1900 THEN ? ELSE ? END, 'done' FROM n",
		f.ts(cutoffT.Add(-time.Hour)), f.ts(cutoffT.Add(time.Hour)))
	f.exec("ANALYZE {p}audit_log")
	stat := func() string {
		var s string
		if err := db.QueryRowContext(ctx, "SELECT stat FROM sqlite_stat1 WHERE tbl = ? AND idx = ?", f.p+"audit_log", f.p+"audit_log_ts").Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	freelist := func() int {
		var n int
		if err := db.QueryRowContext(ctx, "PRAGMA freelist_count").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if s := stat(); s[:5] != "2000 " {
		t.Fatalf("stat before %q", s)
	}
	spec := f.spec()
	spec.Children, spec.VacuumAfter = nil, true
	p, err := f.table(spec).Factory()(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for {
		n, err := p.PurgeBatch(ctx, 500, cutoffT)
		if err != nil {
			t.Fatal(err)
		}
		if n < 500 {
			break
		}
	}
	if freelist() == 0 {
		t.Fatal("no free pages after deleting 1900 rows: nothing to show the vacuum by")
	}
	if err := p.(passes.Closer).Close(); err != nil {
		t.Fatal(err)
	}
	if s := stat(); s[:4] != "100 " {
		t.Fatalf("sqlite_stat1 after the sweep %q, want the 100 rows left", s)
	}
	if n := freelist(); n != 0 {
		t.Fatalf("freelist_count after the sweep = %d, want 0 (incremental vacuum)", n)
	}
}

func TestVacuumStats(t *testing.T) {
	f, spec := hygieneFixture(t, 1000, 500)
	spec.AnalyzeAfterShare = -1 // leave the dead rows and the statistics as the sweep left them
	tbl := f.table(spec)
	sweepAll(t, tbl)
	waitPGStats(t, f, func(s pgTableStats) bool { return s.deleted >= 500 })
	st, ok, err := tbl.VacuumStats(context.Background())
	if err != nil || !ok {
		t.Fatalf("VacuumStats = %+v, %v, %v", st, ok, err)
	}
	if st.DeadTuples < 500 || !st.LastAutovacuum.IsZero() || st.LastAnalyze.IsZero() {
		t.Fatalf("stats %+v: want the 500 dead rows, no autovacuum, the fixture's ANALYZE", st)
	}
	sq := dbtest.SQLite(t)
	lite, err := passes.NewTable(sq, "lite", passes.TableSpec{Table: "t", Key: "id", Timestamp: "ts"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := lite.VacuumStats(context.Background()); ok || err != nil {
		t.Fatalf("SQLite VacuumStats ok=%v err=%v, want none", ok, err)
	}
}
