package main

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/uptrace/bun"
)

// fixture is one size's rows, kept in an unlogged plain table (src) that every variant's
// partitioned table is filled from, so all runs start from the same rows. Partition d
// (0 ≤ d < parts) covers [base+d days, base+d+1 days); row j of it is at base + d days +
// j·(1 day / rows), with id d·rows + j + 1. The last partition holds today (UTC), where
// the foreground inserts.
type fixture struct {
	size
	prefix  string    // table names start with it
	base    time.Time // lower bound of the first partition
	schema  string    // the schema the tables are made in (current_schema())
	partman string    // the schema of the pg_partman extension ("" where it is not installed)
}

func newFixture(s size, prefix string, now time.Time) fixture {
	today := now.UTC().Truncate(24 * time.Hour)
	return fixture{size: s, prefix: prefix, base: today.AddDate(0, 0, -(s.parts - 1))}
}

func (f fixture) src() string   { return f.prefix + "_src" }
func (f fixture) table() string { return f.prefix + "_ev" }

// parent is the table as pg_partman names it.
func (f fixture) parent() string { return f.schema + "." + f.table() }
func (f fixture) total() int     { return f.parts * f.rows }
func (f fixture) day(d int) time.Time {
	return f.base.AddDate(0, 0, d)
}

// step is the distance between two rows of a partition, in microseconds.
func (f fixture) step() int64 { return int64(24*time.Hour/time.Microsecond) / int64(f.rows) }

// at is the timestamp of row j of partition d.
func (f fixture) at(d, j int) time.Time {
	return f.day(d).Add(time.Duration(int64(j)*f.step()) * time.Microsecond)
}

// cut is a cutoff: on the lower bound of the second-last partition (all partitions
// before it wholly expired), or in the middle of the third-last (all before it wholly
// expired, half of it expired, the row at the cutoff kept).
type cut struct {
	name     string
	at       time.Time
	eligible int64 // the fixture's rows below it
}

func (f fixture) cuts() []cut {
	return []cut{
		{"on a boundary", f.day(f.parts - 2), int64(f.parts-2) * int64(f.rows)},
		{"mid-partition", f.day(f.parts - 3).Add(12 * time.Hour), int64(f.parts-3)*int64(f.rows) + int64(f.rows+1)/2},
	}
}

// build creates the source table.
func (f fixture) build(ctx context.Context, db *bun.DB) error {
	stmts := []string{
		"DROP TABLE IF EXISTS " + f.src(),
		"CREATE UNLOGGED TABLE " + f.src() + " (id bigint PRIMARY KEY, at timestamptz NOT NULL, payload text NOT NULL)",
		fmt.Sprintf(`INSERT INTO %s SELECT g, '%s'::timestamptz + ((g-1)/%d) * interval '1 day' + ((g-1)%%%d) * %d * interval '1 microsecond', repeat('x', 100)
FROM generate_series(1::bigint, %d) g`, f.src(), f.base.Format(time.RFC3339), f.rows, f.rows, f.step(), f.total()),
		"ANALYZE " + f.src(),
	}
	return execAll(ctx, db, stmts...)
}

func (f fixture) drop(ctx context.Context, db *bun.DB) error {
	if err := f.dropPartman(ctx, db); err != nil {
		return err
	}
	return execAll(ctx, db, "DROP TABLE IF EXISTS "+f.src(), "DROP TABLE IF EXISTS "+f.table())
}

// dropPartman removes what pg_partman keeps of the table: its part_config row and its
// template table.
func (f fixture) dropPartman(ctx context.Context, db *bun.DB) error {
	if f.partman == "" {
		return nil
	}
	if _, err := db.DB.ExecContext(ctx, "DELETE FROM "+f.partman+".part_config WHERE parent_table = $1", f.parent()); err != nil {
		return fmt.Errorf("pg_partman part_config: %w", err)
	}
	return execAll(ctx, db, "DROP TABLE IF EXISTS "+f.partman+".template_"+f.schema+"_"+f.table())
}

const tableColumns = " (id bigint NOT NULL, at timestamptz NOT NULL, payload text NOT NULL, PRIMARY KEY (at, id)) PARTITION BY RANGE (at)"

// createTable makes the partitioned table by hand, one partition a day and one from the
// day after the fixture to MAXVALUE, without a default partition (so a detach may be
// concurrent).
func (f fixture) createTable(ctx context.Context, db *bun.DB) error {
	stmts := []string{"DROP TABLE IF EXISTS " + f.table(), "CREATE TABLE " + f.table() + tableColumns}
	for d := 0; d < f.parts; d++ {
		stmts = append(stmts, fmt.Sprintf("CREATE TABLE %s_p%d PARTITION OF %s FOR VALUES FROM ('%s') TO ('%s')",
			f.table(), d, f.table(), f.day(d).Format(time.RFC3339), f.day(d+1).Format(time.RFC3339)))
	}
	stmts = append(stmts, fmt.Sprintf("CREATE TABLE %s_pmax PARTITION OF %s FOR VALUES FROM ('%s') TO (MAXVALUE)",
		f.table(), f.table(), f.day(f.parts).Format(time.RFC3339)))
	if err := execAll(ctx, db, stmts...); err != nil {
		return err
	}
	return f.fill(ctx, db)
}

// createPartman makes the table with pg_partman's create_parent (daily, from the first
// day, two days made ahead, and its default partition), in UTC.
func (f fixture) createPartman(ctx context.Context, db *bun.DB) error {
	if err := f.dropPartman(ctx, db); err != nil {
		return err
	}
	if err := execAll(ctx, db, "DROP TABLE IF EXISTS "+f.table(), "CREATE TABLE "+f.table()+tableColumns); err != nil {
		return err
	}
	err := inUTC(ctx, db, func(conn *sql.Conn) error {
		_, err := conn.ExecContext(ctx, "SELECT "+f.partman+".create_parent(p_parent_table := $1, p_control := 'at', p_type := 'native', p_interval := 'daily', p_premake := 2, p_start_partition := $2, p_jobmon := false)",
			f.parent(), f.base.Format("2006-01-02 15:04:05+00"))
		return err
	})
	if err != nil {
		return fmt.Errorf("pg_partman create_parent: %w", err)
	}
	return f.fill(ctx, db)
}

// fill copies the fixture in, turns autovacuum off on every partition (so the dead
// tuples a purge leaves stay to be counted), analyzes, and checkpoints (so every variant
// starts its WAL count after a checkpoint).
func (f fixture) fill(ctx context.Context, db *bun.DB) error {
	if err := execAll(ctx, db, "INSERT INTO "+f.table()+" SELECT * FROM "+f.src()); err != nil {
		return err
	}
	var parts []string
	if err := db.NewRaw("SELECT inhrelid::regclass::text FROM pg_inherits WHERE inhparent = ?::regclass", f.table()).Scan(ctx, &parts); err != nil {
		return fmt.Errorf("list partitions: %w", err)
	}
	var stmts []string
	for _, p := range parts {
		stmts = append(stmts, "ALTER TABLE "+p+" SET (autovacuum_enabled = false)")
	}
	return execAll(ctx, db, append(stmts, "ANALYZE "+f.table(), "CHECKPOINT")...)
}

// keepSet counts the fixture rows in the table but not in the reference (the fixture's
// rows at or after the cutoff, by SQL) and those in the reference but not in the table;
// rows the foreground inserted (ids above the fixture's) are left out of both sides.
func (f fixture) keepSet(ctx context.Context, db *bun.DB, cutoff time.Time) (extra, missing int64, err error) {
	q := fmt.Sprintf(`SELECT
 (SELECT count(*) FROM (SELECT id FROM %[1]s WHERE id <= %[3]d EXCEPT SELECT id FROM %[2]s WHERE at >= $1) x),
 (SELECT count(*) FROM (SELECT id FROM %[2]s WHERE at >= $1 EXCEPT SELECT id FROM %[1]s WHERE id <= %[3]d) y)`, f.table(), f.src(), f.total())
	err = db.DB.QueryRowContext(ctx, q, cutoff).Scan(&extra, &missing)
	if err != nil {
		err = fmt.Errorf("keep-set: %w", err)
	}
	return extra, missing, err
}

// eligibleLeft counts the rows below the cutoff still in the table.
func (f fixture) eligibleLeft(ctx context.Context, db *bun.DB, cutoff time.Time) (int64, error) {
	var n int64
	err := db.DB.QueryRowContext(ctx, "SELECT count(*) FROM "+f.table()+" WHERE at < $1", cutoff).Scan(&n)
	return n, err
}

// deadTuples sums n_dead_tup over the table's partitions as they are now.
func (f fixture) deadTuples(ctx context.Context, db *bun.DB) (int64, error) {
	var n int64
	err := db.DB.QueryRowContext(ctx, `SELECT coalesce(sum(n_dead_tup), 0) FROM pg_stat_user_tables
WHERE relid IN (SELECT inhrelid FROM pg_inherits WHERE inhparent = $1::regclass)`, f.table()).Scan(&n)
	return n, err
}

func inUTC(ctx context.Context, db *bun.DB, f func(*sql.Conn) error) error {
	conn, err := db.DB.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "SET TIME ZONE 'UTC'"); err != nil {
		return err
	}
	err = f(conn)
	_, _ = conn.ExecContext(ctx, "RESET TIME ZONE")
	return err
}

func execAll(ctx context.Context, db *bun.DB, stmts ...string) error {
	for _, s := range stmts {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("%.80s: %w", s, err)
		}
	}
	return nil
}
