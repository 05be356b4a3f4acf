package postgres_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/passtest"
)

// Sub-partitions: a partition that is itself partitioned and wholly expired goes whole,
// its sub-partitions with it, whatever they are partitioned by (here by range of the
// same column for May, by hash of the id for April); the boundary partition, itself
// sub-partitioned with one sub-partition wholly expired, is left to the row path, which
// deletes its expired rows one by one. The keys left are those a row-only sweep of an
// identical table leaves. A retired partition's estimate is its leaves' (a partitioned
// table has no reltuples of its own), and archive moves the whole subtree.
func TestPartitionsSubPartitioned(t *testing.T) {
	t.Parallel()
	for _, mode := range []passes.PartitionMode{passes.PartitionDrop, passes.PartitionArchive} {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			subPartitioned(t, mode)
		})
	}
}

func subPartitioned(t *testing.T, mode passes.PartitionMode) {
	db := passtest.Postgres(t)
	ctx := context.Background()
	spec := &passes.PartitionSpec{Mode: mode}
	if mode == passes.PartitionArchive {
		var schema string
		if err := db.NewRaw("SELECT current_schema()").Scan(ctx, &schema); err != nil {
			t.Fatal(err)
		}
		spec.ArchiveSchema = schema + "_archive"
		execAll(t, db, "CREATE SCHEMA "+spec.ArchiveSchema)
		t.Cleanup(func() { _, _ = db.ExecContext(context.Background(), "DROP SCHEMA "+spec.ArchiveSchema+" CASCADE") })
	}
	for _, table := range []string{"events", "events_rows"} {
		execAll(t, db,
			fmt.Sprintf(`CREATE TABLE %s (id BIGINT NOT NULL, at TIMESTAMPTZ NOT NULL, PRIMARY KEY (at, id)) PARTITION BY RANGE (at)`, table),
			fmt.Sprintf(`CREATE TABLE %[1]s_april PARTITION OF %[1]s FOR VALUES FROM ('2026-04-01') TO ('2026-05-01') PARTITION BY HASH (id)`, table),
			fmt.Sprintf(`CREATE TABLE %[1]s_april_h0 PARTITION OF %[1]s_april FOR VALUES WITH (MODULUS 2, REMAINDER 0)`, table),
			fmt.Sprintf(`CREATE TABLE %[1]s_april_h1 PARTITION OF %[1]s_april FOR VALUES WITH (MODULUS 2, REMAINDER 1)`, table),
			fmt.Sprintf(`CREATE TABLE %[1]s_may PARTITION OF %[1]s FOR VALUES FROM ('2026-05-01') TO ('2026-06-01') PARTITION BY RANGE (at)`, table),
			fmt.Sprintf(`CREATE TABLE %[1]s_may_a PARTITION OF %[1]s_may FOR VALUES FROM ('2026-05-01') TO ('2026-05-16')`, table),
			fmt.Sprintf(`CREATE TABLE %[1]s_may_b PARTITION OF %[1]s_may FOR VALUES FROM ('2026-05-16') TO ('2026-06-01')`, table),
			fmt.Sprintf(`CREATE TABLE %[1]s_june PARTITION OF %[1]s FOR VALUES FROM ('2026-06-01') TO ('2026-07-01') PARTITION BY RANGE (at)`, table),
			fmt.Sprintf(`CREATE TABLE %[1]s_june_a PARTITION OF %[1]s_june FOR VALUES FROM ('2026-06-01') TO ('2026-06-10')`, table),
			fmt.Sprintf(`CREATE TABLE %[1]s_june_b PARTITION OF %[1]s_june FOR VALUES FROM ('2026-06-10') TO ('2026-07-01')`, table),
			fmt.Sprintf(`CREATE TABLE %[1]s_july PARTITION OF %[1]s FOR VALUES FROM ('2026-07-01') TO ('2026-08-01')`, table),
			fmt.Sprintf(`INSERT INTO %s (id, at) VALUES
				(10, '2026-04-03'), (11, '2026-04-30 23:59:59.999999'),
				(1, '2026-05-01'), (2, '2026-05-20 10:00:00'), (3, '2026-05-31 23:59:59.999999'),
				(4, '2026-06-01'), (5, '2026-06-15 11:59:59.999999'), (6, '2026-06-15 12:00:00'), (7, '2026-06-30 23:00:00'),
				(8, '2026-07-01'), (9, '2026-07-20')`, table))
		// Autovacuum analyzes the leaves only, never a partitioned table: so here.
		for _, leaf := range []string{"april_h0", "april_h1", "may_a", "may_b", "june_a", "june_b", "july"} {
			execAll(t, db, "ANALYZE "+table+"_"+leaf)
		}
	}
	w := &twinTables{t: t, db: db}
	got := w.compare(time.Date(2026, 6, 15, 12, 0, 0, 0, time.UTC), spec, nil)
	want := []string{"events_april retiring", "events_april retired", "events_may retiring", "events_may retired"}
	if !slices.Equal(got.outcomes(), want) || got.deleted != 2 {
		t.Fatalf("reports %v, %d rows deleted; want %v and rows 4 and 5 deleted by the row path", got.outcomes(), got.deleted, want)
	}
	if a, m := got.reports[0].EstimatedRows, got.reports[2].EstimatedRows; a != 2 || m != 3 {
		t.Errorf("estimated rows: april %v, may %v; want their leaves' 2 and 3", a, m)
	}
	for _, gone := range []string{"events_april", "events_april_h0", "events_april_h1", "events_may", "events_may_a", "events_may_b"} {
		if !dropped(t, db, gone) {
			t.Errorf("%s is still in the table's schema", gone)
		}
		if mode != passes.PartitionArchive {
			continue
		}
		if dropped(t, db, spec.ArchiveSchema+"."+gone) {
			t.Errorf("%s is not in the archive schema", gone)
		}
	}
	if mode == passes.PartitionArchive {
		var n int
		if err := db.NewRaw("SELECT count(*) FROM "+spec.ArchiveSchema+".events_may").Scan(ctx, &n); err != nil || n != 3 {
			t.Errorf("the archived May holds %d rows (%v); want its 3", n, err)
		}
	}
	for _, kept := range []string{"events_june", "events_june_a", "events_june_b", "events_july"} {
		if dropped(t, db, kept) {
			t.Errorf("%s was dropped; the boundary partition and what follows are the row path's", kept)
		}
	}
	if ids := w.ids("events"); !slices.Equal(ids, []int64{6, 7, 8, 9}) {
		t.Fatalf("keeps %v, want [6 7 8 9]", ids)
	}
}
