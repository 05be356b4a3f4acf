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

// referencesTo reads the restricting foreign keys that point at table from another
// table: pg_constraint on PostgreSQL, pragma foreign_key_list over every table of the
// schema on SQLite.
func (t *Table) referencesTo(ctx context.Context, table string) ([]reference, error) {
	if !t.postgres {
		return t.referencesToSQLite(ctx, table)
	}
	var rows []struct {
		Constraint string `bun:"conname"`
		Schema     string `bun:"nspname"`
		Table      string `bun:"relname"`
		Visible    bool   `bun:"visible"`
		Columns    string `bun:"columns"`
		RefColumns string `bun:"ref_columns"`
	}
	err := t.db.NewRaw(`SELECT c.conname, n.nspname, r.relname, pg_table_is_visible(r.oid) AS visible,
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
	refs := make([]reference, len(rows))
	for i, r := range rows {
		name := r.Table
		if !r.Visible {
			name = r.Schema + "." + r.Table
		}
		refs[i] = reference{Constraint: r.Constraint, Table: name, Columns: strings.Split(r.Columns, ","), RefColumns: strings.Split(r.RefColumns, ",")}
	}
	return refs, nil
}

func (t *Table) referencesToSQLite(ctx context.Context, table string) ([]reference, error) {
	var rows []struct {
		Table  string  `bun:"name"`
		ID     int     `bun:"id"`
		Column string  `bun:"from"`
		To     *string `bun:"to"`
	}
	err := t.db.NewRaw(`SELECT m.name, f.id, f."from", f."to" FROM sqlite_master m JOIN pragma_foreign_key_list(m.name) f
		WHERE m.type = 'table' AND lower(f."table") = lower(?) AND lower(m.name) <> lower(?)
			AND upper(f.on_delete) IN ('NO ACTION', 'RESTRICT')
		ORDER BY m.name, f.id, f.seq`, sqliteTable(table), sqliteTable(table)).Scan(ctx, &rows)
	if err != nil {
		return nil, err
	}
	var refs []reference
	for i, r := range rows {
		if i == 0 || r.Table != rows[i-1].Table || r.ID != rows[i-1].ID {
			refs = append(refs, reference{Table: r.Table})
		}
		last := &refs[len(refs)-1]
		last.Columns = append(last.Columns, r.Column)
		if r.To != nil {
			last.RefColumns = append(last.RefColumns, *r.To)
		}
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
