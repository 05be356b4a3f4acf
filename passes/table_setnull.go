package passes

import (
	"context"
	"slices"
)

// checkSetNull fails a set_null child whose foreign key has a NOT NULL column: clearing
// the reference could never succeed, so every sweep would fail (or pass over) each
// parent such a child references, and a configuration that cannot do its job is better
// refused at startup than discovered in the logs.
func (t *Table) checkSetNull(ctx context.Context, fail func(string, ...any)) {
	for _, c := range t.children {
		if c.onDelete() != OnDeleteSetNull {
			continue
		}
		notNull, err := t.notNullColumns(ctx, c.spec.Table)
		if err != nil {
			fail("checking whether child table %s's foreign key may be NULL: %v", c.spec.Table, err)
			continue
		}
		for _, col := range c.foreignKey() {
			if slices.Contains(notNull, col) {
				fail("child table %s has on_delete: set_null, but %s.%s is NOT NULL, so its reference cannot be cleared; use on_delete: delete or block, or let the column hold NULL",
					c.spec.Table, c.spec.Table, col)
			}
		}
	}
}

// notNullColumns lists the columns of table that refuse NULL.
func (t *Table) notNullColumns(ctx context.Context, table string) ([]string, error) {
	return t.drv.NotNullColumns(ctx, t.db, table)
}
