package passes

import (
	"context"
	"fmt"
	"slices"
	"strings"

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
		t.checkDriver(ctx, fail)
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

// probe checks that the table has the columns, reading no row, with a message that
// names what is missing.
func (t *Table) probe(ctx context.Context, table string, columns ...string) error {
	return t.drv.Probe(ctx, t.db, table, columns)
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
	return t.drv.UniqueIndexes(ctx, t.db, t.spec.Table)
}

// leadsIndex reports whether column is the first column of an index of table.
func (t *Table) leadsIndex(ctx context.Context, table, column string) (bool, error) {
	return t.drv.LeadsIndex(ctx, t.db, table, column)
}
