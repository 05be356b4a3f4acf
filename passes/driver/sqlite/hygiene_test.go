package sqlite_test

import (
	"context"
	"testing"
	"time"

	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/passtest"
)

// The conformance suite's hygiene area states when a sweep has the driver tidy its
// table; this states what SQLite's tidy does, which only SQLite's own tables show.

// TestTidyOptimizesAndVacuums: a sweep that deletes most of a SQLite table refreshes
// its statistics (sqlite_stat1) with PRAGMA optimize, and with vacuum_after gives the
// freed pages back on a database that uses incremental auto-vacuum; SQLite keeps no
// vacuum statistics to read.
func TestTidyOptimizesAndVacuums(t *testing.T) {
	ctx := context.Background()
	cutoff := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	db := passtest.SQLite(t)
	db.SetMaxOpenConns(1)
	// auto_vacuum takes effect on an existing file after a VACUUM.
	for _, stmt := range []string{"PRAGMA auto_vacuum = INCREMENTAL", "VACUUM"} {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	fixture := passtest.Seed(t, db, passtest.Fixture{Table: "tidy", Cutoff: cutoff, Expired: 1900, Fresh: 100})
	if _, err := db.ExecContext(ctx, "ANALYZE tidy"); err != nil {
		t.Fatal(err)
	}
	stat := func() string {
		t.Helper()
		var s string
		if err := db.QueryRowContext(ctx, "SELECT stat FROM sqlite_stat1 WHERE tbl = 'tidy' AND idx = 'tidy_created_at_idx'").Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	freelist := func() int {
		t.Helper()
		var n int
		if err := db.QueryRowContext(ctx, "PRAGMA freelist_count").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if s := stat(); s[:5] != "2000 " {
		t.Fatalf("stat before %q", s)
	}
	spec := fixture.Spec()
	spec.VacuumAfter = true
	tbl, err := passes.NewTable(db.DB, "tidy", spec)
	if err != nil {
		t.Fatal(err)
	}
	p, err := tbl.Factory()(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for {
		n, err := p.PurgeBatch(ctx, 500, cutoff)
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
	fixture.RequireSwept(t)
	if s := stat(); s[:4] != "100 " {
		t.Fatalf("sqlite_stat1 after the sweep %q, want the 100 rows left", s)
	}
	if n := freelist(); n != 0 {
		t.Fatalf("freelist_count after the sweep = %d, want 0 (incremental vacuum)", n)
	}
	if _, ok, err := tbl.VacuumStats(ctx); ok || err != nil {
		t.Fatalf("VacuumStats ok=%v err=%v, want none", ok, err)
	}
}
