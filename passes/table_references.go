package passes

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// reference is a foreign key from a table the pass does not list under children to a
// table it deletes rows from (the swept table or a delete child). The database refuses
// to delete a row such a key still references, so each one is held in place, and found
// only by bisecting the batch it is in; a configuration that lists the table handles it
// in the batch instead.
type reference struct {
	// Constraint is the foreign key's name (PostgreSQL); SQLite names none.
	Constraint string
	// Table is the referencing table, as a children: entry would name it.
	Table string
	// Columns are the referencing table's columns, in the order of the referenced key.
	Columns []string
	// RefColumns are the referenced columns, in the same order; empty when the catalog
	// does not say (SQLite's reference to a primary key by table alone).
	RefColumns []string
	// Parent is the referenced table: the swept table, or the child named so.
	Parent string
	// parentChild is the referenced child; nil when it is the swept table.
	parentChild *childNode
}

// unlistedReferences returns the restricting foreign keys (NO ACTION or RESTRICT: a
// CASCADE or SET NULL key is the database's own business and holds nothing) that point
// at the swept table or a delete child from a table not listed under children for that
// table. A table's references to itself are left out: children cannot list them; so
// are the copies PostgreSQL keeps on each partition of a partitioned table.
func (t *Table) unlistedReferences(ctx context.Context) ([]reference, error) {
	targets := []*childNode{nil}
	for _, c := range t.children {
		if c.onDelete() == OnDeleteDelete {
			targets = append(targets, c)
		}
	}
	var out []reference
	for _, parent := range targets {
		table := t.spec.Table
		if parent != nil {
			table = parent.spec.Table
		}
		refs, err := t.referencesTo(ctx, table)
		if err != nil {
			return nil, fmt.Errorf("foreign keys referencing %s: %w", table, err)
		}
		for _, r := range refs {
			r.Parent, r.parentChild = table, parent
			if !t.listed(r) {
				out = append(out, r)
			}
		}
	}
	return out, nil
}

// listed reports whether a children: entry under r's parent names r's table and columns.
func (t *Table) listed(r reference) bool {
	for _, c := range t.children {
		if c.parent == r.parentChild && sameTable(c.spec.Table, r.Table) && slices.Equal(c.foreignKey(), r.Columns) {
			return true
		}
	}
	return false
}

// sameTable compares two table names the way an unquoted identifier is read: without
// the default schema and without case.
func sameTable(a, b string) bool {
	trim := func(s string) string { return strings.ToLower(strings.TrimPrefix(strings.ToLower(s), "public.")) }
	return trim(a) == trim(b)
}

// referencesTo reads, from the driver's catalog, the restricting foreign keys that
// point at table from another table.
func (t *Table) referencesTo(ctx context.Context, table string) ([]reference, error) {
	found, err := t.drv.References(ctx, t.db, table)
	if err != nil {
		return nil, err
	}
	refs := make([]reference, len(found))
	for i, r := range found {
		refs[i] = reference{Constraint: r.Constraint, Table: r.Table, Columns: r.Columns, RefColumns: r.RefColumns}
	}
	return refs, nil
}

// describe names the reference: its table, constraint and columns.
func (r reference) describe() string {
	name := "a foreign key"
	if r.Constraint != "" {
		name = fmt.Sprintf("constraint %s", r.Constraint)
	}
	return fmt.Sprintf("table %s references %s through %s (%s)", r.Table, r.Parent, name, strings.Join(r.Columns, ", "))
}

// entry is the children: entry that lists r, in the YAML of a pass.
func (r reference) entry() string {
	fk := r.Columns[0]
	if len(r.Columns) > 1 {
		fk = "[" + strings.Join(r.Columns, ", ") + "]"
	}
	if r.parentChild == nil {
		return fmt.Sprintf("- { table: %s, foreign_key: %s, on_delete: block }", r.Table, fk)
	}
	return fmt.Sprintf("- { table: %s, foreign_key: %s, on_delete: set_null }", r.Table, fk)
}

// advice is the whole message about r: what it holds, and the entry to add where.
func (r reference) advice() string {
	where := "the pass's children:"
	alternatives := "on_delete: block keeps a row while it is referenced; delete deletes its rows with the row; set_null clears the reference"
	if r.parentChild != nil {
		where = fmt.Sprintf("the children: of child %s", r.Parent)
		alternatives = "on_delete: set_null clears the reference; delete deletes its rows with their parent"
	}
	return fmt.Sprintf("%s and is not listed under children: the database refuses to delete a row it still references, so each such row is held and found only by bisecting its batch; add to %s %s (%s), or set strict_references: true to refuse such a configuration",
		r.describe(), where, r.entry(), alternatives)
}

// checkReferences warns about (or, with StrictReferences, fails on) every reference
// the configuration left out.
func (t *Table) checkReferences(ctx context.Context, fail, warn func(string, ...any)) {
	refs, err := t.unlistedReferences(ctx)
	if err != nil {
		fail("%v", err)
		return
	}
	for _, r := range refs {
		if t.spec.StrictReferences {
			fail("%s", r.advice())
		} else {
			warn("%s", r.advice())
		}
	}
}
