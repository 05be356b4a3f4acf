package postgres_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/passtest"
)

// TestPartitionedTableSweeps sweeps a range-partitioned table by its natural key, which
// PostgreSQL makes hold the partition column: (at, id) with timestamp at (issue 25,
// item 0; the conformance suite's keyset area states the key on a plain table for every
// driver, partitions are PostgreSQL's own).
func TestPartitionedTableSweeps(t *testing.T) {
	db := passtest.Postgres(t)
	ctx := context.Background()
	cutoff := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	for _, stmt := range []string{
		`CREATE TABLE events (id BIGINT NOT NULL, at TIMESTAMPTZ NOT NULL, PRIMARY KEY (at, id)) PARTITION BY RANGE (at)`,
		`CREATE TABLE events_may PARTITION OF events FOR VALUES FROM ('2026-05-01') TO ('2026-06-01')`,
		`CREATE TABLE events_june PARTITION OF events FOR VALUES FROM ('2026-06-01') TO ('2026-07-01')`,
	} {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	// Ids 1-6 in May and on June 1st before noon (expired), 7-9 after the cutoff; ids
	// do not follow time.
	for id, at := range map[int64]time.Time{
		1: cutoff.Add(-time.Hour), 2: cutoff.Add(-20 * 24 * time.Hour), 3: cutoff.Add(-13 * time.Hour),
		4: cutoff.Add(-13 * time.Hour), 5: cutoff.Add(-time.Minute), 6: cutoff.Add(-25 * 24 * time.Hour),
		7: cutoff, 8: cutoff.Add(time.Hour), 9: cutoff.Add(48 * time.Hour),
	} {
		if _, err := db.ExecContext(ctx, "INSERT INTO events (id, at) VALUES (?, ?)", id, at); err != nil {
			t.Fatal(err)
		}
	}
	tbl, err := passes.NewTable(db.DB, "events", passes.TableSpec{Table: "events", KeyColumns: []string{"at", "id"}, Timestamp: "at"})
	if err != nil {
		t.Fatal(err)
	}
	if res := passtest.Sweep(t, tbl, 2, cutoff); res.Deleted != 6 {
		t.Fatalf("the sweep deleted %d rows, want the 6 expired ones", res.Deleted)
	}
	var left []int64
	if err := db.NewSelect().TableExpr("events").Column("id").Scan(ctx, &left); err != nil {
		t.Fatal(err)
	}
	if slices.Sort(left); !slices.Equal(left, []int64{7, 8, 9}) {
		t.Fatalf("events keeps %v, want [7 8 9]", left)
	}
}
