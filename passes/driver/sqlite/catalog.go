package sqlite

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes/driver"
)

// unqualified drops a schema qualifier, which SQLite's table-valued pragmas take apart.
func unqualified(table string) string {
	if _, name, ok := strings.Cut(table, "."); ok {
		return name
	}
	return table
}

// ColumnTypes is nil: a SQLite column's declared type does not bind its values, and
// the sweep has nothing to respect in it.
func (Driver) ColumnTypes(context.Context, bun.IDB, string) (map[string]string, error) {
	return nil, nil
}

// NotNullColumns reads pragma_table_info.
func (Driver) NotNullColumns(ctx context.Context, db bun.IDB, table string) ([]string, error) {
	var cols []string
	err := db.NewRaw(`SELECT name FROM pragma_table_info(?) WHERE "notnull" = 1`, unqualified(table)).Scan(ctx, &cols)
	return cols, err
}

// UniqueIndexes reads the primary key from pragma_table_info and the unique,
// non-partial indexes from pragma_index_list.
func (Driver) UniqueIndexes(ctx context.Context, db bun.IDB, table string) ([][]string, error) {
	var lists []string
	table = unqualified(table)
	err := db.NewRaw(`SELECT group_concat(name, ',') FROM (SELECT name FROM pragma_table_info(?) WHERE pk > 0 ORDER BY pk) HAVING count(*) > 0
		UNION ALL
		SELECT (SELECT group_concat(coalesce(ii.name, ''), ',') FROM pragma_index_info(il.name) ii)
		FROM pragma_index_list(?) il WHERE il."unique" = 1 AND il.partial = 0`, table, table).Scan(ctx, &lists)
	return driver.SplitLists(lists), err
}

// LeadsIndex reads pragma_index_list; an INTEGER PRIMARY KEY is the rowid, indexed yet
// in no index list, so it is asked for apart.
func (Driver) LeadsIndex(ctx context.Context, db bun.IDB, table, column string) (bool, error) {
	var n int
	table = unqualified(table)
	err := db.NewRaw(`SELECT count(*) FROM pragma_index_list(?) il
		WHERE (SELECT name FROM pragma_index_info(il.name) WHERE seqno = 0) = ?`, table, column).Scan(ctx, &n)
	if err == nil && n == 0 {
		err = db.NewRaw(`SELECT count(*) FROM pragma_table_info(?) WHERE pk = 1 AND name = ? AND upper(type) = 'INTEGER'`, table, column).Scan(ctx, &n)
	}
	return n > 0, err
}

// Probe asks pragma_table_info: SQLite would read an unknown double-quoted column in a
// select as a string literal, so selecting it proves nothing.
func (Driver) Probe(ctx context.Context, db bun.IDB, table string, columns []string) error {
	var have []string
	if err := db.NewRaw("SELECT name FROM pragma_table_info(?)", unqualified(table)).Scan(ctx, &have); err != nil {
		return err
	}
	if len(have) == 0 {
		return fmt.Errorf("no such table: %s", table)
	}
	var missing []string
	for _, c := range columns {
		if !slices.Contains(have, c) {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("no such column: %s", strings.Join(missing, ", "))
	}
	return nil
}

// References reads pragma_foreign_key_list over every table of the schema; SQLite
// names no constraint.
func (Driver) References(ctx context.Context, db bun.IDB, table string) ([]driver.Reference, error) {
	var rows []struct {
		Table  string  `bun:"name"`
		ID     int     `bun:"id"`
		Column string  `bun:"from"`
		To     *string `bun:"to"`
	}
	table = unqualified(table)
	err := db.NewRaw(`SELECT m.name, f.id, f."from", f."to" FROM sqlite_master m JOIN pragma_foreign_key_list(m.name) f
		WHERE m.type = 'table' AND lower(f."table") = lower(?) AND lower(m.name) <> lower(?)
			AND upper(f.on_delete) IN ('NO ACTION', 'RESTRICT')
		ORDER BY m.name, f.id, f.seq`, table, table).Scan(ctx, &rows)
	if err != nil {
		return nil, err
	}
	var refs []driver.Reference
	for i, r := range rows {
		if i == 0 || r.Table != rows[i-1].Table || r.ID != rows[i-1].ID {
			refs = append(refs, driver.Reference{Table: r.Table})
		}
		last := &refs[len(refs)-1]
		last.Columns = append(last.Columns, r.Column)
		if r.To != nil {
			last.RefColumns = append(last.RefColumns, *r.To)
		}
	}
	return refs, nil
}
