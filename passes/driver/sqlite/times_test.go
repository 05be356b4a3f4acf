package sqlite_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/passtest"
)

// TestTextOffsets: SQLite keeps timestamps as text, and text that carries an offset (or
// a T and a Z) is compared as the instant it names, not as text: none is deleted before
// its time, and the ones whose instant has passed go whatever their text. Only a
// database that stores instants as text has this to get right, so it is SQLite's own
// test rather than a conformance behaviour.
func TestTextOffsets(t *testing.T) {
	db := passtest.SQLite(t)
	ctx := context.Background()
	cutoff := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	for _, stmt := range []string{"CREATE TABLE texts (id INTEGER PRIMARY KEY, at TEXT NOT NULL)", "CREATE INDEX texts_at ON texts (at, id)"} {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	rows := map[int]string{
		1: "2026-06-01 07:30:00-05:00",      // 12:30Z: kept (as text it sorts before the cutoff)
		2: "2026-06-01 11:00:00-05:00",      // 16:00Z: kept
		3: "2026-06-01 13:30:00+02:00",      // 11:30Z: expired
		4: "2026-06-01 11:59:59.999+00:00",  // expired
		5: "2026-06-01 12:00:00+00:00",      // at the cutoff: kept
		6: "2026-06-01T11:00:00Z",           // expired
		7: "not a time",                     // unreadable: kept
		8: "2026-05-31 23:00:00-14:00",      // 2026-06-01 13:00Z: kept
		9: "2026-06-01 12:00:00.0004+00:00", // after the cutoff by 0.4 ms: kept
	}
	for id, at := range rows {
		if _, err := db.ExecContext(ctx, "INSERT INTO texts (id, at) VALUES (?, ?)", id, at); err != nil {
			t.Fatal(err)
		}
	}
	tbl, err := passes.NewTable(db.DB, "texts", passes.TableSpec{Table: "texts", Key: "id", Timestamp: "at"})
	if err != nil {
		t.Fatal(err)
	}
	oldest, ok, err := tbl.OldestExpired(ctx, cutoff)
	if err != nil || !ok || !oldest.Equal(cutoff.Add(-time.Hour)) {
		t.Fatalf("oldest expired = %v %v %v, want %v", oldest, ok, err, cutoff.Add(-time.Hour))
	}
	if n := passtest.Sweep(t, tbl, 2, cutoff).Deleted; n != 3 {
		t.Errorf("deleted %d, want 3", n)
	}
	var kept []int64
	if err := db.NewSelect().TableExpr("texts").Column("id").Scan(ctx, &kept); err != nil {
		t.Fatal(err)
	}
	if slices.Sort(kept); !slices.Equal(kept, []int64{1, 2, 5, 7, 8, 9}) {
		t.Fatalf("kept %v, want [1 2 5 7 8 9]", kept)
	}
}
