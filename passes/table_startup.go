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
// tables exist, that the key is unique and that no set_null child's foreign key is NOT
// NULL (failures), and that the timestamp and every child's foreign key lead an index
// (warnings: without one each batch scans the table).
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

	columns := append(slices.Clone(t.key), t.spec.Timestamp)
	if t.spec.Filter != nil {
		columns = append(columns, t.spec.Filter.Column)
	}
	if err := t.probe(ctx, t.spec.Table, columns...); err != nil {
		fail("table %s or its columns %s: %v", t.spec.Table, strings.Join(columns, ", "), err)
	}
	for _, c := range t.children {
		cols := slices.Clone(c.foreignKey())
		if len(c.spec.Children) > 0 {
			cols = append(cols, c.key()...)
		}
		if err := t.probe(ctx, c.spec.Table, cols...); err != nil {
			fail("child table %s or its columns %s: %v", c.spec.Table, strings.Join(cols, ", "), err)
		}
	}
	if len(failures) == 0 {
		key := strings.Join(t.key, ", ")
		if unique, err := t.uniqueKey(ctx); err != nil {
			fail("checking that %s (%s) is unique: %v", t.spec.Table, key, err)
		} else if !unique {
			fail("key %s (%s) is not unique (no primary key or unique index on these columns): batches delete by key", t.spec.Table, key)
		}
		t.checkConditions(ctx, fail)
		if t.spec.ProbeQuery != "" {
			if err := t.Signals().Probe(ctx); err != nil {
				fail("probe_query: %v", err)
			}
		}
		t.checkSetNull(ctx, fail)
		t.checkTimestamp(ctx, fail, warn)
		t.checkReferences(ctx, fail, warn)
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
		fk := c.foreignKey()[0]
		if ok, err := t.leadsIndex(ctx, c.spec.Table, fk); err == nil && !ok {
			warn("no index starts with %s.%s: every batch scans that child table", c.spec.Table, fk)
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

// uniqueKey reports whether some unique index (or the primary key) covers only key
// columns: then no two rows share a key.
func (t *Table) uniqueKey(ctx context.Context) (bool, error) {
	indexes, err := t.uniqueIndexes(ctx)
	if err != nil {
		return false, err
	}
	for _, cols := range indexes {
		covered := len(cols) > 0
		for _, c := range cols {
			covered = covered && slices.Contains(t.key, c)
		}
		if covered {
			return true, nil
		}
	}
	return false, nil
}

// uniqueIndexes lists the columns of each unique index of the table, and of its primary
// key; an index on an expression lists a column named "".
func (t *Table) uniqueIndexes(ctx context.Context) ([][]string, error) {
	var lists []string
	if t.postgres {
		err := t.db.NewRaw(`SELECT array_to_string(ARRAY(
				SELECT coalesce(a.attname, '') FROM unnest(i.indkey[0:i.indnkeyatts-1]) WITH ORDINALITY k(attnum, ord)
				LEFT JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
				ORDER BY k.ord), ',')
			FROM pg_index i WHERE i.indrelid = to_regclass(?) AND i.indisunique AND i.indpred IS NULL`,
			regclass(t.spec.Table)).Scan(ctx, &lists)
		return splitLists(lists), err
	}
	table := sqliteTable(t.spec.Table)
	err := t.db.NewRaw(`SELECT group_concat(name, ',') FROM (SELECT name FROM pragma_table_info(?) WHERE pk > 0 ORDER BY pk) HAVING count(*) > 0
		UNION ALL
		SELECT (SELECT group_concat(coalesce(ii.name, ''), ',') FROM pragma_index_info(il.name) ii)
		FROM pragma_index_list(?) il WHERE il."unique" = 1 AND il.partial = 0`, table, table).Scan(ctx, &lists)
	return splitLists(lists), err
}

func splitLists(lists []string) [][]string {
	out := make([][]string, len(lists))
	for i, l := range lists {
		out[i] = strings.Split(l, ",")
	}
	return out
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
