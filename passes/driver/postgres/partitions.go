package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/driver/pgdriver"

	"github.com/retentionkit/retention/passes/driver"
)

var _ driver.Partitions = Driver{}

// PartitionedTable reads pg_partitioned_table (strategy, key columns, default
// partition), the publications that replicate any table of the partition tree, and the
// foreign keys into the tree from tables outside it (the copies PostgreSQL keeps per
// partition, conparentid <> 0, are left out: the constraint a user made is named once).
func (Driver) PartitionedTable(ctx context.Context, db bun.IDB, table string) (driver.PartitionedTable, error) {
	var out driver.PartitionedTable
	var rows []struct {
		Strategy   string `bun:"partstrat"`
		Columns    string `bun:"columns"`
		ColumnType string `bun:"column_type"`
		Default    string `bun:"default_partition"`
		Concurrent bool   `bun:"concurrent"`
	}
	err := db.NewRaw(`SELECT p.partstrat,
			array_to_string(ARRAY(SELECT coalesce(a.attname, '') FROM unnest(p.partattrs::int2[]) WITH ORDINALITY k(attnum, ord)
				LEFT JOIN pg_attribute a ON a.attrelid = p.partrelid AND a.attnum = k.attnum ORDER BY k.ord), ',') AS columns,
			coalesce((SELECT format_type(a.atttypid, a.atttypmod) FROM pg_attribute a
				WHERE a.attrelid = p.partrelid AND a.attnum = p.partattrs[0]), '') AS column_type,
			CASE WHEN p.partdefid = 0 THEN '' ELSE p.partdefid::regclass::text END AS default_partition,
			current_setting('server_version_num')::int >= 140000 AS concurrent
		FROM pg_partitioned_table p WHERE p.partrelid = to_regclass(?)`, regclass(table)).Scan(ctx, &rows)
	if err != nil || len(rows) == 0 {
		return out, err
	}
	r := rows[0]
	out.Partitioned, out.ColumnType, out.DefaultPartition, out.ConcurrentDetach = true, r.ColumnType, r.Default, r.Concurrent
	out.Strategy = map[string]string{"r": "range", "l": "list", "h": "hash"}[r.Strategy]
	out.KeyColumns = strings.Split(r.Columns, ",")
	if err := db.NewRaw(`SELECT DISTINCT pt.pubname FROM pg_publication_tables pt
			JOIN pg_partition_tree(to_regclass(?)) t ON t.relid = to_regclass(quote_ident(pt.schemaname) || '.' || quote_ident(pt.tablename))
			ORDER BY 1`, regclass(table)).Scan(ctx, &out.Publications); err != nil {
		return out, fmt.Errorf("publications: %w", err)
	}
	var refs []struct {
		Constraint string `bun:"conname"`
		Schema     string `bun:"nspname"`
		Table      string `bun:"relname"`
		Visible    bool   `bun:"visible"`
		Columns    string `bun:"columns"`
	}
	err = db.NewRaw(`SELECT c.conname, n.nspname, r.relname, pg_table_is_visible(r.oid) AS visible,
			array_to_string(ARRAY(SELECT a.attname FROM unnest(c.conkey) WITH ORDINALITY k(attnum, ord)
				JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum ORDER BY k.ord), ',') AS columns
		FROM pg_constraint c JOIN pg_class r ON r.oid = c.conrelid JOIN pg_namespace n ON n.oid = r.relnamespace
		WHERE c.contype = 'f' AND c.conparentid = 0
			AND c.confrelid IN (SELECT relid FROM pg_partition_tree(to_regclass(?0)))
			AND c.conrelid NOT IN (SELECT relid FROM pg_partition_tree(to_regclass(?0)))
		ORDER BY n.nspname, r.relname, c.conname`, regclass(table)).Scan(ctx, &refs)
	if err != nil {
		return out, fmt.Errorf("foreign keys: %w", err)
	}
	// tgtype: bit 0 is FOR EACH ROW, bit 3 is DELETE; internal triggers (foreign keys')
	// are the database's own; a partition's clone of its parent's trigger is named once.
	err = db.NewRaw(`SELECT DISTINCT c.relname || '.' || tg.tgname FROM pg_trigger tg JOIN pg_class c ON c.oid = tg.tgrelid
		JOIN pg_partition_tree(to_regclass(?)) t ON t.relid = tg.tgrelid
		WHERE NOT tg.tgisinternal AND tg.tgparentid = 0 AND tg.tgtype & 1 = 1 AND tg.tgtype & 8 = 8 ORDER BY 1`, regclass(table)).Scan(ctx, &out.DeleteTriggers)
	if err != nil {
		return out, fmt.Errorf("delete triggers: %w", err)
	}
	for _, r := range refs {
		name := r.Table
		if !r.Visible {
			name = r.Schema + "." + r.Table
		}
		out.References = append(out.References, driver.Reference{Constraint: r.Constraint, Table: name, Columns: strings.Split(r.Columns, ",")})
	}
	return out, nil
}

// ExpiredPartitions reads each direct partition's bound from pg_get_expr(relpartbound)
// and has the server compare the upper bounds with the cutoff, both cast to the
// partition column's type, and order them the same way: Go never parses a time.
func (Driver) ExpiredPartitions(ctx context.Context, db bun.IDB, table string, cutoff any) ([]driver.Partition, error) {
	var rows []struct {
		Schema  string  `bun:"nspname"`
		Name    string  `bun:"relname"`
		Pending bool    `bun:"inhdetachpending"`
		Tuples  float64 `bun:"reltuples"`
		Bound   string  `bun:"bound"`
		Type    string  `bun:"column_type"`
	}
	// A sub-partitioned partition has no reltuples of its own that anyone keeps up
	// (autovacuum analyzes leaves only): its estimate is its leaves', -1 when one of
	// them was never analyzed.
	err := db.NewRaw(`SELECT n.nspname, c.relname, i.inhdetachpending,
			CASE WHEN c.relkind = 'p' THEN
				(SELECT CASE WHEN bool_or(l.reltuples < 0) THEN -1 ELSE coalesce(sum(l.reltuples), 0) END
					FROM pg_partition_tree(c.oid) t JOIN pg_class l ON l.oid = t.relid WHERE t.isleaf)
				ELSE c.reltuples END::float8 AS reltuples,
			pg_get_expr(c.relpartbound, c.oid) AS bound,
			(SELECT format_type(a.atttypid, a.atttypmod) FROM pg_partitioned_table p JOIN pg_attribute a
				ON a.attrelid = p.partrelid AND a.attnum = p.partattrs[0] WHERE p.partrelid = i.inhparent) AS column_type
		FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE i.inhparent = to_regclass(?)`, regclass(table)).Scan(ctx, &rows)
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	var parts []driver.Partition
	var uppers []string
	var pending []driver.Partition
	for _, r := range rows {
		lower, upper, ok := rangeBound(r.Bound)
		p := driver.Partition{Schema: r.Schema, Name: r.Name, Lower: lower, Upper: upper, Pending: r.Pending, EstimatedRows: r.Tuples}
		switch {
		case ok && upper != "MAXVALUE" && upper != "MINVALUE":
			parts = append(parts, p)
			uppers = append(uppers, upper)
		case r.Pending:
			pending = append(pending, p)
		}
	}
	if len(parts) == 0 || rows[0].Type == "" {
		return pending, nil
	}
	// The type comes from the catalog's format_type, never from a config.
	var expired []struct {
		Ord     int  `bun:"ord"`
		Expired bool `bun:"expired"`
	}
	err = db.NewRaw(`SELECT u.ord, u.v::`+rows[0].Type+` <= ?::`+rows[0].Type+` AS expired
		FROM unnest(?::text[]) WITH ORDINALITY AS u(v, ord) ORDER BY u.v::`+rows[0].Type+`, u.ord`,
		cutoff, pgdialect.Array(uppers)).Scan(ctx, &expired)
	if err != nil {
		return nil, fmt.Errorf("compare partition bounds with the cutoff: %w", err)
	}
	var out []driver.Partition
	for _, e := range expired {
		p := parts[e.Ord-1]
		p.Expired = e.Expired
		switch {
		case p.Pending:
			pending = append(pending, p)
		case p.Expired:
			out = append(out, p)
		}
	}
	return append(pending, out...), nil
}

// rangeBound reads "FOR VALUES FROM (lower) TO (upper)" of a one-column range
// partition; each value is a quoted literal (a doubled quote inside stands for one), or a bare word or
// number (MINVALUE, 42). ok is false for anything else (a default partition, a list or
// hash bound, several columns).
func rangeBound(bound string) (lower, upper string, ok bool) {
	rest, found := strings.CutPrefix(bound, "FOR VALUES FROM (")
	if !found {
		return "", "", false
	}
	lower, rest, ok = boundValue(rest)
	if !ok {
		return "", "", false
	}
	rest, found = strings.CutPrefix(rest, ") TO (")
	if !found {
		return "", "", false
	}
	upper, rest, ok = boundValue(rest)
	return lower, upper, ok && rest == ")"
}

// boundValue reads one value from the start of s and returns the rest.
func boundValue(s string) (value, rest string, ok bool) {
	if !strings.HasPrefix(s, "'") {
		end := strings.IndexAny(s, "),")
		if end <= 0 || s[end] != ')' {
			return "", "", false
		}
		return s[:end], s[end:], true
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		if s[i] != '\'' {
			b.WriteByte(s[i])
			continue
		}
		if i+1 < len(s) && s[i+1] == '\'' {
			b.WriteByte('\'')
			i++
			continue
		}
		return b.String(), s[i+1:], true
	}
	return "", "", false
}

// DetachPartition runs ALTER TABLE ... DETACH PARTITION [CONCURRENTLY | FINALIZE] with
// lock_timeout set around it on db (the sweep's connection, outside a transaction, as
// CONCURRENTLY requires). A lock timeout, a deadlock, or another detach pending on the
// table wraps driver.ErrPartitionContended.
func (d Driver) DetachPartition(ctx context.Context, db bun.IDB, table string, p driver.Partition, how driver.Detach) error {
	suffix := ""
	switch {
	case how.Finalize:
		suffix = " FINALIZE"
	case how.Concurrently:
		suffix = " CONCURRENTLY"
	}
	q := db.NewRaw("ALTER TABLE ? DETACH PARTITION ?.?"+suffix, bun.Safe(regclass(table)), bun.Ident(p.Schema), bun.Ident(p.Name)).String()
	return withLockTimeout(ctx, db, how.LockTimeout, q)
}

// DisposeDetached drops the detached partition, or moves it to schema, or leaves it.
func (Driver) DisposeDetached(ctx context.Context, db bun.IDB, p driver.Partition, mode, schema string, lockTimeout time.Duration) error {
	switch mode {
	case "drop":
		return withLockTimeout(ctx, db, lockTimeout, db.NewRaw("DROP TABLE ?.?", bun.Ident(p.Schema), bun.Ident(p.Name)).String())
	case "archive":
		return withLockTimeout(ctx, db, lockTimeout, archiveTree(db, p, schema))
	}
	return nil
}

// archiveTree is the one statement that moves p to schema with, when p is itself
// partitioned, every table under it (SET SCHEMA on a partitioned table moves that table
// only): all of them or, on any failure, none.
func archiveTree(db bun.IDB, p driver.Partition, schema string) string {
	root := db.NewRaw("?.?", bun.Ident(p.Schema), bun.Ident(p.Name)).String()
	body := db.NewRaw(`DECLARE r record;
BEGIN
	FOR r IN SELECT t.relid::regclass AS rel FROM pg_partition_tree(?::regclass) t WHERE t.relid <> ?::regclass LOOP
		EXECUTE format('ALTER TABLE %s SET SCHEMA %I', r.rel, ?);
	END LOOP;
	EXECUTE format('ALTER TABLE %s SET SCHEMA %I', ?::regclass, ?);
END`, root, root, schema, root, schema).String()
	// Dollar quoting with a tag no catalog name or literal above can hold unquoted: the
	// body's literals are bun's (quotes doubled), so only a name holding the tag could
	// end it early; the tag grows until none does.
	tag := "$archive$"
	for strings.Contains(body, tag) {
		tag = tag[:len(tag)-1] + "x$"
	}
	return "DO " + tag + "\n" + body + "\n" + tag
}

// clientCheck is how often a partition statement's server session checks, while it
// waits, that the node is still there (client_connection_check_interval, PostgreSQL
// 14+). Without it a session whose node was killed mid DETACH ... CONCURRENTLY waits
// on (lock_timeout may be long) and, once what it waits for is gone, finishes the
// detach on its own: the partition then leaves the table with no sweep left to drop
// it. With it the session ends within this interval and the partition stays pending,
// which the next sweep finalizes and retires.
const clientCheck = time.Second

// withLockTimeout runs query with the session's lock_timeout set to timeout and its
// client_connection_check_interval to clientCheck (where the server has it), and puts
// both settings back after it, whatever happened.
func withLockTimeout(ctx context.Context, db bun.IDB, timeout time.Duration, query string) error {
	if _, err := db.ExecContext(ctx, "SELECT set_config('lock_timeout', ?, false)", fmt.Sprintf("%dms", driver.TimeoutMillis(timeout))); err != nil {
		return err
	}
	// Best effort: client_connection_check_interval is PostgreSQL 14's (a plain detach
	// may run on an older server), and a server that cannot watch its client's socket
	// refuses any value but 0; either way the statement runs without it.
	if _, err := db.ExecContext(ctx, fmt.Sprintf(`DO $check$ BEGIN
		PERFORM set_config('client_connection_check_interval', '%dms', false);
	EXCEPTION WHEN others THEN NULL;
	END $check$`, clientCheck.Milliseconds())); err != nil {
		return err
	}
	_, err := db.ExecContext(ctx, query)
	_, rerr := db.ExecContext(context.WithoutCancel(ctx), `SELECT set_config(name, reset_val, false) FROM pg_settings
		WHERE name IN ('lock_timeout', 'client_connection_check_interval')`)
	if err != nil {
		var pe pgdriver.Error
		if errors.As(err, &pe) {
			switch pe.Field('C') {
			case "55P03", "40P01", "55000":
				err = fmt.Errorf("%w: %w", driver.ErrPartitionContended, err)
			case "42P01": // no such relation, or not a partition of the table (any more)
				err = fmt.Errorf("%w: %w", driver.ErrPartitionGone, err)
			}
		}
	}
	return errors.Join(err, rerr)
}

// SchemaExists reads pg_namespace.
func (Driver) SchemaExists(ctx context.Context, db bun.IDB, schema string) (bool, error) {
	return db.NewSelect().TableExpr("pg_namespace").Where("nspname = ?", schema).Exists(ctx)
}
