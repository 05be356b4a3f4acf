package driver

import (
	"strings"

	"context"

	"github.com/uptrace/bun"
)

// Catalog reads what the startup checks and the batches need to know about tables.
// Table names are as a config gives them: unquoted, optionally schema-qualified; a driver
// whose database has no schemas drops the qualifier.
type Catalog interface {
	// ColumnTypes maps each column of table to its type's name; nil (and no error) on a
	// database whose columns have no types the sweep must respect. A time type's name
	// carries its fractional precision in parentheses ("datetime(3)") where comparing
	// with the cutoff depends on it; BaseType drops it.
	ColumnTypes(ctx context.Context, db bun.IDB, table string) (map[string]string, error)
	// NotNullColumns lists the columns of table that refuse NULL.
	NotNullColumns(ctx context.Context, db bun.IDB, table string) ([]string, error)
	// UniqueIndexes lists the columns of each unique index of table and of its primary
	// key; an index on an expression lists a column named "".
	UniqueIndexes(ctx context.Context, db bun.IDB, table string) ([][]string, error)
	// LeadsIndex reports whether column is the first column of an index of table.
	LeadsIndex(ctx context.Context, db bun.IDB, table, column string) (bool, error)
	// Probe fails when table lacks one of columns, with a message naming what is
	// missing; it reads no row.
	Probe(ctx context.Context, db bun.IDB, table string, columns []string) error
	// References lists the restricting foreign keys (NO ACTION or RESTRICT) that point
	// at table from another table.
	References(ctx context.Context, db bun.IDB, table string) ([]Reference, error)
}

// Reference is a foreign key as the catalog reports it.
type Reference struct {
	// Constraint is the foreign key's name; empty when the database names none.
	Constraint string
	// Table is the referencing table, schema-qualified when not on the search path.
	Table string
	// Columns are the referencing columns, in the order of the referenced key.
	Columns []string
	// RefColumns are the referenced columns, in the same order; empty when the catalog
	// does not say (a reference to a primary key by table alone).
	RefColumns []string
}

// BaseType is a type's name as ColumnTypes gives it without a precision in parentheses:
// "datetime(3)" is "datetime".
func BaseType(typ string) string {
	if name, _, ok := strings.Cut(typ, "("); ok {
		return name
	}
	return typ
}

// SplitLists splits each comma-separated list of column names, the form catalogs that
// aggregate columns to text return.
func SplitLists(lists []string) [][]string {
	out := make([][]string, len(lists))
	for i, l := range lists {
		out[i] = strings.Split(l, ",")
	}
	return out
}
