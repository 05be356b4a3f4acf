package postgres

import (
	"context"
	"fmt"
	"github.com/retentionkit/retention/core"
	"strings"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes/driver"
)

// regclass spells a checked table name as to_regclass reads it: each part quoted, so
// case and odd characters survive.
func regclass(table string) string {
	parts := strings.Split(table, ".")
	for i, p := range parts {
		parts[i] = `"` + p + `"`
	}
	return strings.Join(parts, ".")
}

// ColumnTypes reads pg_attribute; a table with no columns there does not exist.
func (Driver) ColumnTypes(ctx context.Context, db bun.IDB, table string) (map[string]string, error) {
	rows, err := db.QueryContext(ctx, db.NewRaw(`SELECT a.attname, format_type(a.atttypid, NULL) FROM pg_attribute a
		WHERE a.attrelid = to_regclass(?) AND a.attnum > 0 AND NOT a.attisdropped`, regclass(table)).String())
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	types := map[string]string{}
	for rows.Next() {
		var name, typ string
		if err := rows.Scan(&name, &typ); err != nil {
			return nil, err
		}
		types[name] = typ
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(types) == 0 {
		// Drift, not a fault: the table the pass was configured with went away, and
		// supervision retries drift without counting it toward the restart limit.
		return nil, core.NewDatabaseError(core.ErrSchemaDrift, fmt.Errorf("no such table: %s", table))
	}
	return types, nil
}

// NotNullColumns reads pg_attribute.attnotnull.
func (Driver) NotNullColumns(ctx context.Context, db bun.IDB, table string) ([]string, error) {
	var cols []string
	err := db.NewRaw(`SELECT a.attname FROM pg_attribute a
		WHERE a.attrelid = to_regclass(?) AND a.attnum > 0 AND NOT a.attisdropped AND a.attnotnull`,
		regclass(table)).Scan(ctx, &cols)
	return cols, err
}

// UniqueIndexes reads pg_index: the key columns (not the INCLUDE ones) of each unique,
// non-partial index; the primary key is one of them.
func (Driver) UniqueIndexes(ctx context.Context, db bun.IDB, table string) ([][]string, error) {
	var lists []string
	err := db.NewRaw(`SELECT array_to_string(ARRAY(
			SELECT coalesce(a.attname, '') FROM unnest(i.indkey[0:i.indnkeyatts-1]) WITH ORDINALITY k(attnum, ord)
			LEFT JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
			ORDER BY k.ord), ',')
		FROM pg_index i WHERE i.indrelid = to_regclass(?) AND i.indisunique AND i.indpred IS NULL`,
		regclass(table)).Scan(ctx, &lists)
	return driver.SplitLists(lists), err
}

// LeadsIndex reads pg_index's first key column.
func (Driver) LeadsIndex(ctx context.Context, db bun.IDB, table, column string) (bool, error) {
	var n int
	err := db.NewRaw(`SELECT count(*) FROM pg_index i
		JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
		WHERE i.indrelid = to_regclass(?) AND a.attname = ?`, regclass(table), column).Scan(ctx, &n)
	return n > 0, err
}

// Probe selects the columns without reading a row, so the server's own message names
// what is missing.
func (Driver) Probe(ctx context.Context, db bun.IDB, table string, columns []string) error {
	cols := make([]any, len(columns))
	placeholders := make([]string, len(columns))
	for i, c := range columns {
		cols[i], placeholders[i] = bun.Ident(c), "?"
	}
	rows, err := db.NewSelect().TableExpr("?", bun.Safe(regclass(table))).ColumnExpr(strings.Join(placeholders, ", "), cols...).Where("1 = 0").Rows(ctx)
	if err != nil {
		return err
	}
	return rows.Close()
}

// References reads pg_constraint. A table's references to itself are left out, and so
// are the copies PostgreSQL keeps on each partition (conparentid <> 0).
func (Driver) References(ctx context.Context, db bun.IDB, table string) ([]driver.Reference, error) {
	var rows []struct {
		Constraint string `bun:"conname"`
		Schema     string `bun:"nspname"`
		Table      string `bun:"relname"`
		Visible    bool   `bun:"visible"`
		Columns    string `bun:"columns"`
		RefColumns string `bun:"ref_columns"`
	}
	err := db.NewRaw(`SELECT c.conname, n.nspname, r.relname, pg_table_is_visible(r.oid) AS visible,
			array_to_string(ARRAY(SELECT a.attname FROM unnest(c.conkey) WITH ORDINALITY k(attnum, ord)
				JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum ORDER BY k.ord), ',') AS columns,
			array_to_string(ARRAY(SELECT a.attname FROM unnest(c.confkey) WITH ORDINALITY k(attnum, ord)
				JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.attnum ORDER BY k.ord), ',') AS ref_columns
		FROM pg_constraint c JOIN pg_class r ON r.oid = c.conrelid JOIN pg_namespace n ON n.oid = r.relnamespace
		WHERE c.contype = 'f' AND c.confrelid = to_regclass(?) AND c.conrelid <> c.confrelid AND c.conparentid = 0 AND c.confdeltype IN ('a', 'r')
		ORDER BY n.nspname, r.relname, c.conname`, regclass(table)).Scan(ctx, &rows)
	if err != nil {
		return nil, err
	}
	refs := make([]driver.Reference, len(rows))
	for i, r := range rows {
		name := r.Table
		if !r.Visible {
			name = r.Schema + "." + r.Table
		}
		refs[i] = driver.Reference{Constraint: r.Constraint, Table: name, Columns: strings.Split(r.Columns, ","), RefColumns: strings.Split(r.RefColumns, ",")}
	}
	return refs, nil
}
