package mysql

import (
	"context"
	"fmt"
	"strings"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/core"
	"github.com/retentionkit/retention/passes/driver"
)

// schemaOf splits a config's table name into its database (nil: the connection's own,
// DATABASE()) and the table; MySQL's databases are what other servers call schemas.
func schemaOf(table string) (schema any, name string) {
	if s, n, ok := strings.Cut(table, "."); ok {
		return s, n
	}
	return nil, table
}

// ColumnTypes reads information_schema.COLUMNS' DATA_TYPE (the type without its length:
// "bigint", "timestamp", "datetime"), with a DATETIME's or TIMESTAMP's fractional
// precision when it has one ("datetime(3)"), which the cutoff is rounded up to (Cutoff);
// a table with no columns there does not exist.
func (Driver) ColumnTypes(ctx context.Context, db bun.IDB, table string) (map[string]string, error) {
	schema, name := schemaOf(table)
	var rows []struct {
		Name string `bun:"name"`
		Type string `bun:"type"`
	}
	err := db.NewRaw(`SELECT COLUMN_NAME AS name, CASE WHEN LOWER(DATA_TYPE) IN ('datetime', 'timestamp') AND DATETIME_PRECISION > 0
			THEN CONCAT(LOWER(DATA_TYPE), '(', DATETIME_PRECISION, ')') ELSE LOWER(DATA_TYPE) END AS type FROM information_schema.COLUMNS
		WHERE TABLE_SCHEMA = COALESCE(?, DATABASE()) AND TABLE_NAME = ?`, schema, name).Scan(ctx, &rows)
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		// Drift, not a fault: the table the pass was configured with went away.
		return nil, core.NewDatabaseError(core.ErrSchemaDrift, fmt.Errorf("no such table: %s", table))
	}
	types := make(map[string]string, len(rows))
	for _, r := range rows {
		types[r.Name] = r.Type
	}
	return types, nil
}

// NotNullColumns reads information_schema.COLUMNS' IS_NULLABLE.
func (Driver) NotNullColumns(ctx context.Context, db bun.IDB, table string) ([]string, error) {
	schema, name := schemaOf(table)
	var cols []string
	err := db.NewRaw(`SELECT COLUMN_NAME FROM information_schema.COLUMNS
		WHERE TABLE_SCHEMA = COALESCE(?, DATABASE()) AND TABLE_NAME = ? AND IS_NULLABLE = 'NO'`, schema, name).Scan(ctx, &cols)
	return cols, err
}

// UniqueIndexes reads information_schema.STATISTICS: the columns of each unique index,
// the primary key's included. A column of a functional index, or one indexed only by a
// prefix (which makes the prefix unique, not the column), is listed as "".
func (Driver) UniqueIndexes(ctx context.Context, db bun.IDB, table string) ([][]string, error) {
	schema, name := schemaOf(table)
	var lists []string
	err := db.NewRaw(`SELECT GROUP_CONCAT(CASE WHEN SUB_PART IS NULL THEN COALESCE(COLUMN_NAME, '') ELSE '' END
			ORDER BY SEQ_IN_INDEX SEPARATOR ',')
		FROM information_schema.STATISTICS
		WHERE TABLE_SCHEMA = COALESCE(?, DATABASE()) AND TABLE_NAME = ? AND NON_UNIQUE = 0
		GROUP BY INDEX_NAME`, schema, name).Scan(ctx, &lists)
	return driver.SplitLists(lists), err
}

// LeadsIndex reads information_schema.STATISTICS' first column of each index.
func (Driver) LeadsIndex(ctx context.Context, db bun.IDB, table, column string) (bool, error) {
	schema, name := schemaOf(table)
	var n int
	err := db.NewRaw(`SELECT COUNT(*) FROM information_schema.STATISTICS
		WHERE TABLE_SCHEMA = COALESCE(?, DATABASE()) AND TABLE_NAME = ? AND SEQ_IN_INDEX = 1 AND COLUMN_NAME = ?`,
		schema, name, column).Scan(ctx, &n)
	return n > 0, err
}

// Probe selects the columns without reading a row, so the server's own message names
// what is missing (1146 no such table, 1054 unknown column).
func (Driver) Probe(ctx context.Context, db bun.IDB, table string, columns []string) error {
	cols := make([]any, len(columns))
	placeholders := make([]string, len(columns))
	for i, c := range columns {
		cols[i], placeholders[i] = bun.Ident(c), "?"
	}
	rows, err := db.NewSelect().TableExpr("?", bun.Ident(table)).ColumnExpr(strings.Join(placeholders, ", "), cols...).Where("1 = 0").Rows(ctx)
	if err != nil {
		return err
	}
	return rows.Close()
}

// References reads information_schema.REFERENTIAL_CONSTRAINTS and KEY_COLUMN_USAGE: the
// foreign keys from other tables to table that refuse a delete (RESTRICT or NO ACTION,
// which InnoDB treats alike). A referencing table in another database is named with it.
func (Driver) References(ctx context.Context, db bun.IDB, table string) ([]driver.Reference, error) {
	schema, name := schemaOf(table)
	var rows []struct {
		Constraint string `bun:"constraint_name"`
		Schema     string `bun:"table_schema"`
		Table      string `bun:"table_name"`
		Own        bool   `bun:"own"`
		Column     string `bun:"column_name"`
		RefColumn  string `bun:"ref_column"`
	}
	err := db.NewRaw(`SELECT k.CONSTRAINT_NAME AS constraint_name, k.TABLE_SCHEMA AS table_schema, k.TABLE_NAME AS table_name,
			k.TABLE_SCHEMA = k.REFERENCED_TABLE_SCHEMA AS own, k.COLUMN_NAME AS column_name, k.REFERENCED_COLUMN_NAME AS ref_column
		FROM information_schema.REFERENTIAL_CONSTRAINTS r
		JOIN information_schema.KEY_COLUMN_USAGE k ON k.CONSTRAINT_SCHEMA = r.CONSTRAINT_SCHEMA
			AND k.CONSTRAINT_NAME = r.CONSTRAINT_NAME AND k.TABLE_NAME = r.TABLE_NAME
		WHERE k.REFERENCED_TABLE_SCHEMA = COALESCE(?, DATABASE()) AND k.REFERENCED_TABLE_NAME = ?
			AND NOT (k.TABLE_SCHEMA = k.REFERENCED_TABLE_SCHEMA AND k.TABLE_NAME = k.REFERENCED_TABLE_NAME)
			AND r.DELETE_RULE IN ('RESTRICT', 'NO ACTION')
		ORDER BY k.TABLE_SCHEMA, k.TABLE_NAME, k.CONSTRAINT_NAME, k.ORDINAL_POSITION`, schema, name).Scan(ctx, &rows)
	if err != nil {
		return nil, err
	}
	var refs []driver.Reference
	for i, r := range rows {
		if i == 0 || r.Constraint != rows[i-1].Constraint || r.Table != rows[i-1].Table || r.Schema != rows[i-1].Schema {
			t := r.Table
			if !r.Own {
				t = r.Schema + "." + r.Table
			}
			refs = append(refs, driver.Reference{Constraint: r.Constraint, Table: t})
		}
		last := &refs[len(refs)-1]
		last.Columns = append(last.Columns, r.Column)
		last.RefColumns = append(last.RefColumns, r.RefColumn)
	}
	return refs, nil
}
