package postgres_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/passtest"
)

// Beside pg_partman: on tables whose daily partitions pg_partman creates (it adds a
// default partition, so concurrently is false), the pass retires the expired ones with
// the keep-set of a row-only twin, and pg_partman's maintenance runs on afterwards and
// keeps creating partitions. Skipped where pg_partman is not installed in the database.
func TestPartitionsBesidePartman(t *testing.T) {
	db := passtest.Postgres(t)
	ctx := context.Background()
	var partman string
	if err := db.NewRaw("SELECT coalesce((SELECT extnamespace::regnamespace::text FROM pg_extension WHERE extname = 'pg_partman'), '')").Scan(ctx, &partman); err != nil {
		t.Fatal(err)
	}
	if partman == "" {
		t.Skip("pg_partman is not installed in this database (CREATE EXTENSION pg_partman)")
	}
	var schema string
	if err := db.NewRaw("SELECT current_schema()").Scan(ctx, &schema); err != nil {
		t.Fatal(err)
	}
	today := time.Now().UTC().Truncate(24 * time.Hour)
	start := today.AddDate(0, 0, -6)
	for _, table := range []string{"events", "events_rows"} {
		parent := schema + "." + table
		execAll(t, db, fmt.Sprintf(`CREATE TABLE %s (id BIGINT NOT NULL, at TIMESTAMPTZ NOT NULL, PRIMARY KEY (at, id)) PARTITION BY RANGE (at)`, table))
		t.Cleanup(func() {
			_, _ = db.ExecContext(context.Background(), fmt.Sprintf("DELETE FROM %s.part_config WHERE parent_table = '%s'", partman, parent))
			_, _ = db.ExecContext(context.Background(), fmt.Sprintf("DROP TABLE IF EXISTS %s.template_%s_%s", partman, schema, table))
		})
		execAll(t, db, fmt.Sprintf(`SELECT %s.create_parent('%s', 'at', 'native', 'daily', p_premake := 2, p_start_partition := '%s')`,
			partman, parent, start.Format("2006-01-02")))
		for d := 0; d < 8; d++ {
			execAll(t, db, fmt.Sprintf(`INSERT INTO %s (id, at) VALUES (%d, '%s'), (%d, '%s')`, table,
				2*d+1, start.AddDate(0, 0, d).Add(time.Hour).Format(time.RFC3339), 2*d+2, start.AddDate(0, 0, d).Add(20*time.Hour).Format(time.RFC3339)))
		}
		// One old row in pg_partman's default partition.
		execAll(t, db, fmt.Sprintf(`INSERT INTO %s (id, at) VALUES (100, '%s')`, table, start.AddDate(0, 0, -30).Format(time.RFC3339)))
		execAll(t, db, "ANALYZE "+table)
	}
	w := &twinTables{t: t, db: db}
	no := false
	cutoff := today.AddDate(0, 0, -3).Add(12 * time.Hour)
	got := w.compare(cutoff, &passes.PartitionSpec{Concurrently: &no}, nil)
	var retired []string
	for _, r := range got.reports {
		if r.Outcome == passes.PartitionRetired {
			retired = append(retired, r.Partition[strings.Index(r.Partition, ".")+1:])
		}
	}
	var want []string
	for d := start; !d.After(today.AddDate(0, 0, -4)); d = d.AddDate(0, 0, 1) {
		want = append(want, "events_p"+d.Format("2006_01_02"))
	}
	if !slices.Equal(retired, want) {
		t.Fatalf("retired %v, want %v", retired, want)
	}
	// pg_partman's maintenance still runs, and still makes the partitions ahead.
	execAll(t, db, fmt.Sprintf(`SELECT %s.run_maintenance('%s.events')`, partman, schema))
	var ahead int
	if err := db.NewRaw("SELECT count(*) FROM pg_inherits WHERE inhparent = to_regclass('events') AND inhrelid <> to_regclass('events_default')").Scan(ctx, &ahead); err != nil {
		t.Fatal(err)
	}
	if ahead < 5 {
		t.Fatalf("after maintenance events has %d partitions, want at least the 3 left and 2 ahead", ahead)
	}
}
