package passes

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/core/validation"
)

var _ validation.StartupValidator = (*Table)(nil)

// ValidateStartup checks, before any delete, that the table, its columns and its child
// tables exist and that the key is unique (failures), and that the timestamp and every
// child's foreign key lead an index (warnings: without one each batch scans the table).
// A check the database could not answer (IsTransient) makes the result Unavailable, so
// the host may retry it rather than call the configuration bad.
func (t *Table) ValidateStartup(ctx context.Context) validation.StartupResult {
	var failures, warnings []string
	unavailable := false
	fail := func(format string, args ...any) {
		for _, a := range args {
			if err, ok := a.(error); ok && IsTransient(err) {
				unavailable = true
			}
		}
		failures = append(failures, fmt.Sprintf(format, args...))
	}
	warn := func(format string, args ...any) {
		warnings = append(warnings, fmt.Sprintf("pass %q: ", t.name)+fmt.Sprintf(format, args...))
	}

	columns := []string{t.spec.Key, t.spec.Timestamp}
	if t.spec.Filter != nil {
		columns = append(columns, t.spec.Filter.Column)
	}
	if err := t.probe(ctx, t.spec.Table, columns...); err != nil {
		fail("table %s or its columns %s: %v", t.spec.Table, strings.Join(columns, ", "), err)
	}
	for _, c := range t.children {
		cols := []string{c.spec.ForeignKey}
		if len(c.spec.Children) > 0 {
			cols = append(cols, c.key())
		}
		if err := t.probe(ctx, c.spec.Table, cols...); err != nil {
			fail("child table %s or its columns %s: %v", c.spec.Table, strings.Join(cols, ", "), err)
		}
	}
	if len(failures) == 0 {
		if unique, err := t.uniqueKey(ctx); err != nil {
			fail("checking that %s.%s is unique: %v", t.spec.Table, t.spec.Key, err)
		} else if !unique {
			fail("key %s.%s is not unique (no primary key or unique index on it alone): batches delete by key", t.spec.Table, t.spec.Key)
		}
		t.indexWarnings(ctx, warn)
	}
	if len(failures) > 0 {
		msg := fmt.Sprintf("pass %q: %s", t.name, strings.Join(failures, "; "))
		if unavailable {
			return validation.Unavailable(msg)
		}
		return validation.Failure(msg)
	}
	return validation.Success(fmt.Sprintf("pass %q: table %s is ready", t.name, t.spec.Table), warnings...)
}

func (t *Table) indexWarnings(ctx context.Context, warn func(string, ...any)) {
	if ok, err := t.leadsIndex(ctx, t.spec.Table, t.spec.Timestamp); err == nil && !ok {
		warn("no index starts with %s.%s: every batch scans the table to find expired rows; create one on (%s, %s)",
			t.spec.Table, t.spec.Timestamp, t.spec.Timestamp, t.spec.Key)
	}
	for _, c := range t.children {
		if c.onDelete() == OnDeleteBlock && len(c.spec.Children) > 0 {
			continue
		}
		if ok, err := t.leadsIndex(ctx, c.spec.Table, c.spec.ForeignKey); err == nil && !ok {
			warn("no index starts with %s.%s: every batch scans that child table", c.spec.Table, c.spec.ForeignKey)
		}
	}
}

// probe checks that the table has the columns. On PostgreSQL it selects them without
// reading a row, so the database's own message names what is missing; SQLite would read
// an unknown double-quoted column as a string literal, so there its table_info is asked.
func (t *Table) probe(ctx context.Context, table string, columns ...string) error {
	if !t.postgres {
		return t.probeSQLite(ctx, table, columns)
	}
	cols := make([]any, len(columns))
	placeholders := make([]string, len(columns))
	for i, c := range columns {
		cols[i], placeholders[i] = bun.Ident(c), "?"
	}
	rows, err := t.db.NewSelect().TableExpr("?", ident(table)).ColumnExpr(strings.Join(placeholders, ", "), cols...).Where("1 = 0").Rows(ctx)
	if err != nil {
		return err
	}
	return rows.Close()
}

func (t *Table) probeSQLite(ctx context.Context, table string, columns []string) error {
	var have []string
	if err := t.db.NewRaw("SELECT name FROM pragma_table_info(?)", sqliteTable(table)).Scan(ctx, &have); err != nil {
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

// regclass spells a checked table name as PostgreSQL's to_regclass reads it.
func regclass(table string) string {
	parts := strings.Split(table, ".")
	for i, p := range parts {
		parts[i] = `"` + p + `"`
	}
	return strings.Join(parts, ".")
}

func (t *Table) uniqueKey(ctx context.Context) (bool, error) {
	var n int
	if t.postgres {
		err := t.db.NewRaw(`SELECT count(*) FROM pg_index i
			JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
			WHERE i.indrelid = to_regclass(?) AND i.indisunique AND i.indnkeyatts = 1 AND a.attname = ?`,
			regclass(t.spec.Table), t.spec.Key).Scan(ctx, &n)
		return n > 0, err
	}
	table := sqliteTable(t.spec.Table)
	err := t.db.NewRaw(`SELECT
			(SELECT count(*) FROM pragma_table_info(?) WHERE pk > 0) = 1 AND
			(SELECT count(*) FROM pragma_table_info(?) WHERE pk = 1 AND name = ?) = 1
		OR (SELECT count(*) FROM pragma_index_list(?) il
			WHERE il."unique" = 1
			AND (SELECT count(*) FROM pragma_index_info(il.name)) = 1
			AND (SELECT name FROM pragma_index_info(il.name)) = ?) > 0`,
		table, table, t.spec.Key, table, t.spec.Key).Scan(ctx, &n)
	return n > 0, err
}

func (t *Table) leadsIndex(ctx context.Context, table, column string) (bool, error) {
	var n int
	if t.postgres {
		err := t.db.NewRaw(`SELECT count(*) FROM pg_index i
			JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
			WHERE i.indrelid = to_regclass(?) AND a.attname = ?`, regclass(table), column).Scan(ctx, &n)
		return n > 0, err
	}
	table = sqliteTable(table)
	err := t.db.NewRaw(`SELECT count(*) FROM pragma_index_list(?) il
		WHERE (SELECT name FROM pragma_index_info(il.name) WHERE seqno = 0) = ?`, table, column).Scan(ctx, &n)
	if err == nil && n == 0 {
		// An INTEGER PRIMARY KEY is the rowid: indexed, yet in no index list.
		err = t.db.NewRaw(`SELECT count(*) FROM pragma_table_info(?) WHERE pk = 1 AND name = ? AND upper(type) = 'INTEGER'`, table, column).Scan(ctx, &n)
	}
	return n > 0, err
}

// sqliteTable drops a schema qualifier, which SQLite's table-valued pragmas take apart.
func sqliteTable(table string) string {
	if _, name, ok := strings.Cut(table, "."); ok {
		return name
	}
	return table
}
