package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/passtest"
)

// The conformance suite's hygiene area states when a sweep has the driver tidy its
// table; these tests state what PostgreSQL's tidy does (ANALYZE, and VACUUM when asked)
// and what its statistics then say, which only PostgreSQL's catalog shows.

var hygieneCutoff = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

// pgStats are the cumulative statistics of one table.
type pgStats struct {
	deleted                 int64
	lastAnalyze, lastVacuum *time.Time
}

// readPGStats reads table's statistics, taking a new snapshot each time (they are
// cached for the transaction otherwise).
func readPGStats(t *testing.T, db *passtest.DB, table string) pgStats {
	t.Helper()
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, "SELECT pg_stat_clear_snapshot()"); err != nil {
		t.Fatal(err)
	}
	var s pgStats
	err := db.QueryRowContext(ctx, "SELECT n_tup_del, last_analyze, last_vacuum FROM pg_stat_user_tables WHERE relname = ? AND schemaname = current_schema()", table).
		Scan(&s.deleted, &s.lastAnalyze, &s.lastVacuum)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// waitPGStats polls the statistics until ok holds (the deletes reach them when the
// sweep's backend reports, within about a second), failing after a bound on a hang.
func waitPGStats(t *testing.T, db *passtest.DB, table string, ok func(pgStats) bool) pgStats {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		s := readPGStats(t, db, table)
		if ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("statistics still %+v after 30s", s)
		}
		<-tick.C
	}
}

// hygieneTable is a table of 1,000 rows, half expired, analyzed once (so the size
// estimate is known), with autovacuum off so that only the sweep analyzes or vacuums it.
func hygieneTable(t *testing.T) (*passtest.DB, *passtest.Table) {
	t.Helper()
	db := passtest.Postgres(t)
	tbl := passtest.Seed(t, db, passtest.Fixture{Table: "tidy", Cutoff: hygieneCutoff, Expired: 500, Fresh: 500})
	for _, stmt := range []string{"ALTER TABLE tidy SET (autovacuum_enabled = false)", "ANALYZE tidy"} {
		if _, err := db.ExecContext(context.Background(), stmt); err != nil {
			t.Fatal(err)
		}
	}
	return db, tbl
}

// TestTidyAnalyzesAndVacuums: PostgreSQL's tidy after a big sweep analyzes the table,
// and vacuums it (plain VACUUM) only with vacuum_after.
func TestTidyAnalyzesAndVacuums(t *testing.T) {
	for _, vacuum := range []bool{false, true} {
		t.Run(map[bool]string{false: "analyze", true: "analyze and vacuum"}[vacuum], func(t *testing.T) {
			db, fixture := hygieneTable(t)
			before := waitPGStats(t, db, "tidy", func(s pgStats) bool { return s.lastAnalyze != nil })
			spec := fixture.Spec()
			spec.VacuumAfter = vacuum
			tbl, err := passes.NewTable(db.DB, "tidy", spec)
			if err != nil {
				t.Fatal(err)
			}
			passtest.Sweep(t, tbl, 100, hygieneCutoff)
			fixture.RequireSwept(t)
			// ANALYZE and VACUUM report their time when they end, which is before Close
			// returns; the deletes reach the statistics a little later, so once they have,
			// the snapshot is one taken after the sweep.
			after := waitPGStats(t, db, "tidy", func(s pgStats) bool { return s.deleted >= before.deleted+500 })
			if !after.lastAnalyze.After(*before.lastAnalyze) {
				t.Fatalf("last_analyze %v -> %v: not analyzed", before.lastAnalyze, after.lastAnalyze)
			}
			if vacuumed := after.lastVacuum != nil; vacuumed != vacuum {
				t.Fatalf("last_vacuum %v: vacuumed = %v, want %v", after.lastVacuum, vacuumed, vacuum)
			}
		})
	}
}

// TestVacuumStats: the table's vacuum statistics show the dead rows a sweep left (with
// hygiene off), no autovacuum and the fixture's ANALYZE.
func TestVacuumStats(t *testing.T) {
	db, fixture := hygieneTable(t)
	spec := fixture.Spec()
	spec.AnalyzeAfterShare = -1 // leave the dead rows and the statistics as the sweep left them
	tbl, err := passes.NewTable(db.DB, "tidy", spec)
	if err != nil {
		t.Fatal(err)
	}
	passtest.Sweep(t, tbl, 100, hygieneCutoff)
	waitPGStats(t, db, "tidy", func(s pgStats) bool { return s.deleted >= 500 })
	st, ok, err := tbl.VacuumStats(context.Background())
	if err != nil || !ok {
		t.Fatalf("VacuumStats = %+v, %v, %v", st, ok, err)
	}
	if st.DeadTuples < 500 || !st.LastAutovacuum.IsZero() || st.LastAnalyze.IsZero() {
		t.Fatalf("stats %+v: want the 500 dead rows, no autovacuum, the fixture's ANALYZE", st)
	}
}
