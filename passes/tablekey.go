package passes

import (
	"strings"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/schema"
)

// A key is one value per key column: a one-column key is a list of one. These helpers
// write keys and key columns into statements the same way for one column or several,
// as row values ((a, b) IN ((1, 2), (3, 4))), which both databases compare column by
// column.

// columnList writes cols as `a, b`, each qualified by table unless table is "".
func columnList(table string, cols []string) schema.QueryAppender {
	args := make([]any, len(cols))
	for i, c := range cols {
		if table == "" {
			args[i] = bun.Ident(c)
		} else {
			args[i] = qualified(table, c)
		}
	}
	return bun.SafeQuery(placeholders(len(cols)), args...)
}

// tuple writes cols as one value: the column itself, or the row value (a, b).
func tuple(table string, cols []string) schema.QueryAppender {
	if len(cols) == 1 {
		return columnList(table, cols)
	}
	return bun.SafeQuery("(?)", columnList(table, cols))
}

// keyList writes keys as the list an IN compares a tuple with: 1, 2 for one column,
// (1, 'a'), (2, 'b') for several.
func keyList(keys [][]any) schema.QueryAppender {
	if len(keys) > 0 && len(keys[0]) == 1 {
		flat := make([]any, len(keys))
		for i, k := range keys {
			flat[i] = k[0]
		}
		return bun.List(flat)
	}
	rows := make([]any, len(keys))
	for i, k := range keys {
		rows[i] = bun.SafeQuery("(?)", bun.List(k))
	}
	return bun.SafeQuery(placeholders(len(rows)), rows...)
}

// joinOn writes the condition that a child row references a parent row: each foreign
// key column equals its key column.
func joinOn(child string, fk []string, parent string, key []string) schema.QueryAppender {
	parts := make([]string, len(fk))
	args := make([]any, 0, 2*len(fk))
	for i := range fk {
		parts[i] = "? = ?"
		args = append(args, qualified(child, fk[i]), qualified(parent, key[i]))
	}
	return bun.SafeQuery(strings.Join(parts, " AND "), args...)
}

func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}
