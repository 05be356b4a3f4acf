package passes_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/dbtest"
	"github.com/retentionkit/retention/passes/passtest"
)

// keyColumn is one column of a primary key under test, with its type on each database.
type keyColumn struct{ name, pg, sqlite string }

// keyType is a primary key under test: its columns and the key of the row numbered p.
// Values are chosen so the key order differs from the row order, from Go's string
// order (numeric 9.25 < 10.75, mixed case under a collation) and, within a timestamp,
// decides the cursor's order.
type keyType struct {
	name  string
	cols  []keyColumn
	value func(p int) []any
}

var keyTypes = []keyType{
	{name: "bigint", cols: []keyColumn{{"id", "BIGINT", "BIGINT"}}, value: func(p int) []any { return []any{int64(p)*1_000_000_007 - 5_000_000_000} }},
	{name: "integer", cols: []keyColumn{{"id", "INTEGER", "INTEGER"}}, value: func(p int) []any { return []any{int32(p*37 - 400)} }},
	{name: "smallint", cols: []keyColumn{{"id", "SMALLINT", "SMALLINT"}}, value: func(p int) []any { return []any{int16(p*3 - 40)} }},
	{name: "uuid", cols: []keyColumn{{"id", "UUID", "TEXT"}}, value: func(p int) []any {
		return []any{fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", uint32(p*2654435761), p, p, p, p*p)}
	}},
	{name: "numeric", cols: []keyColumn{{"id", "NUMERIC(12,3)", "NUMERIC"}}, value: func(p int) []any { return []any{float64(p)*1.5 + 0.25} }},
	{name: "text", cols: []keyColumn{{"id", "TEXT", "TEXT"}}, value: func(p int) []any {
		return []any{fmt.Sprintf("%c-%d key", "aBcDe"[p%5], p)}
	}},
	{name: "varchar", cols: []keyColumn{{"id", "VARCHAR(40)", "VARCHAR(40)"}}, value: func(p int) []any {
		return []any{fmt.Sprintf("%c%d", "ZyXwV"[p%5], p*7)}
	}},
	{name: "timestamptz", cols: []keyColumn{{"id", "TIMESTAMPTZ", "TIMESTAMP"}}, value: func(p int) []any {
		return []any{time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(p*p)*time.Minute + time.Duration(p)*time.Microsecond)}
	}},
	{name: "timestamp", cols: []keyColumn{{"id", "TIMESTAMP", "TEXT"}}, value: func(p int) []any {
		return []any{time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(p) * 90 * time.Second)}
	}},
	{name: "composite", cols: []keyColumn{{"tenant", "TEXT", "TEXT"}, {"id", "BIGINT", "INTEGER"}}, value: func(p int) []any {
		return []any{[]string{"acme", "Beta", "corp"}[p%3], int64(100 - p/3)}
	}},
}

// keyFixture is a table keyed by a key type, with a delete child, a set_null child, a
// block child and an unlisted child, all referencing the whole key.
type keyFixture struct {
	*fixture
	kt keyType
}

func newKeyFixture(t *testing.T, db *bun.DB, kt keyType) *keyFixture {
	pg := db.Dialect().Name() == dialect.PG
	f := &keyFixture{fixture: &fixture{t: t, db: db, p: newFixturePrefix()}, kt: kt}
	var defs, names, refDefs, refs []string
	for _, c := range kt.cols {
		typ := c.sqlite
		if pg {
			typ = c.pg
		}
		defs = append(defs, c.name+" "+typ+" NOT NULL")
		names = append(names, c.name)
		refDefs = append(refDefs, "ref_"+c.name+" "+typ)
		refs = append(refs, "ref_"+c.name)
	}
	ts := map[bool]string{true: "TIMESTAMPTZ", false: "TEXT"}[pg]
	fk := fmt.Sprintf("FOREIGN KEY (%s) REFERENCES {p}k (%s)", strings.Join(refs, ", "), strings.Join(names, ", "))
	f.exec(fmt.Sprintf("CREATE TABLE {p}k (%s, n INTEGER NOT NULL, at %s NOT NULL, PRIMARY KEY (%s))", strings.Join(defs, ", "), ts, strings.Join(names, ", ")))
	for _, child := range []string{"kc", "kn", "kh", "ku"} {
		f.exec(fmt.Sprintf("CREATE TABLE {p}%s (id INTEGER PRIMARY KEY, %s, %s)", child, strings.Join(refDefs, ", "), fk))
	}
	t.Cleanup(func() {
		for _, table := range []string{"kc", "kn", "kh", "ku", "k"} {
			_, _ = db.ExecContext(context.Background(), "DROP TABLE IF EXISTS "+f.p+table)
		}
	})
	return f
}

// row inserts row n with the key of p at at, and a child in each of the given tables.
func (f *keyFixture) row(n, p int, at time.Time, children ...string) {
	key := f.kt.value(p)
	marks := strings.TrimSuffix(strings.Repeat("?, ", len(key)), ", ")
	var cols []string
	for _, c := range f.kt.cols {
		cols = append(cols, c.name)
	}
	f.exec(fmt.Sprintf("INSERT INTO {p}k (%s, n, at) VALUES (%s, ?, ?)", strings.Join(cols, ", "), marks), append(key, n, at)...)
	for i, c := range cols {
		cols[i] = "ref_" + c
	}
	for _, child := range children {
		f.exec(fmt.Sprintf("INSERT INTO {p}%s (id, %s) VALUES (?, %s)", child, strings.Join(cols, ", "), marks), append([]any{n}, key...)...)
	}
}

func (f *keyFixture) spec(children bool) passes.TableSpec {
	var key, refs []string
	for _, c := range f.kt.cols {
		key = append(key, c.name)
		refs = append(refs, "ref_"+c.name)
	}
	s := passes.TableSpec{Table: f.p + "k", Timestamp: "at"}
	child := func(table string, on passes.OnDelete) passes.ChildSpec {
		c := passes.ChildSpec{Table: f.p + table, OnDelete: on}
		if len(refs) == 1 {
			c.ForeignKey = refs[0]
		} else {
			c.ForeignKeyColumns = refs
		}
		return c
	}
	if len(key) == 1 {
		s.Key = key[0]
	} else {
		s.KeyColumns = key
	}
	if children {
		s.Children = []passes.ChildSpec{child("kc", passes.OnDeleteDelete), child("kn", passes.OnDeleteSetNull), child("kh", passes.OnDeleteBlock)}
	}
	return s
}

// ns returns the row numbers left in a table (column n of k, id of a child), sorted.
func (f *keyFixture) ns(query string) []int {
	f.t.Helper()
	var ns []int
	if err := f.db.NewRaw(replacePrefix(query, f.p)).Scan(context.Background(), &ns); err != nil {
		f.t.Fatalf("%s: %v", query, err)
	}
	slices.Sort(ns)
	return ns
}

// TestTableKeyTypes sweeps a table keyed by every common key type, composite keys
// included, through several batches (so the cursor goes back to the server), a
// bisection (a row an unlisted table holds) and, with children, delete, set_null and
// block children referencing the whole key; the dry run counts what the sweep deletes.
func TestTableKeyTypes(t *testing.T) {
	for _, kt := range keyTypes {
		for _, withChildren := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/children=%v", kt.name, withChildren), func(t *testing.T) {
				dbtest.Each(t, func(t *testing.T, db *bun.DB) {
					testKeyType(t, db, kt, withChildren)
				})
			})
		}
	}
}

func testKeyType(t *testing.T, db *bun.DB, kt keyType, withChildren bool) {
	f := newKeyFixture(t, db, kt)
	const rows, expired = 30, 24
	want := []int{7} // held by the unlisted child: skipped
	for n := range rows {
		p := (n*17 + 5) % rows                               // key order differs from row order
		at := cutoffT.Add(-time.Duration(n/3+1) * time.Hour) // three rows a timestamp
		if n >= expired {
			at = cutoffT.Add(time.Duration(n) * time.Minute)
			want = append(want, n)
		}
		children := []string{"kc", "kn"}
		switch n {
		case 5:
			children = append(children, "kh")
			if withChildren {
				want = append(want, n) // block child: kept
			}
		case 7:
			children = append(children, "ku")
		}
		if !withChildren && n != 7 {
			children = nil
		}
		f.row(n, p, at, children...)
	}
	slices.Sort(want)
	tbl, err := passes.NewTable(db, "keys", f.spec(withChildren))
	if err != nil {
		t.Fatal(err)
	}
	if res := tbl.ValidateStartup(context.Background()); res.Failed() {
		t.Fatalf("startup validation: %s", res.Message())
	}
	dry, err := tbl.DryRun(context.Background(), cutoffT)
	if err != nil {
		t.Fatal(err)
	}
	res := passtest.Sweep(t, tbl, 4, cutoffT)
	if got := f.ns("SELECT n FROM {p}k"); !slices.Equal(got, want) {
		t.Fatalf("kept rows %v, want %v", got, want)
	}
	deleted := rows - len(want)
	if res.Deleted != deleted || len(res.Skipped) != 1 || dry.Eligible != int64(deleted+1) {
		t.Fatalf("sweep deleted %d, skipped %v; dry run %+v; want %d deleted, 1 skipped, %d eligible", res.Deleted, res.Skipped, dry, deleted, deleted+1)
	}
	if got, want := fmt.Sprint(res.Skipped[0]), fmt.Sprint(skippedKey(kt.value((7*17+5)%rows))); got != want && kt.name != "numeric" && !strings.HasPrefix(kt.name, "timestamp") {
		t.Fatalf("skipped key %s, want %s", got, want)
	}
	if !withChildren {
		return
	}
	if got := f.ns("SELECT id FROM {p}kc"); !slices.Equal(got, want) {
		t.Fatalf("delete children left %v, want those of the kept rows %v", got, want)
	}
	refCol := "ref_" + kt.cols[0].name
	if got := f.ns("SELECT id FROM {p}kn WHERE " + refCol + " IS NOT NULL"); !slices.Equal(got, want) {
		t.Fatalf("set_null children still referencing %v, want those of the kept rows %v", got, want)
	}
	if got := f.ns("SELECT id FROM {p}kn"); len(got) != rows {
		t.Fatalf("set_null children: %d left, want all %d", len(got), rows)
	}
}

func skippedKey(key []any) any {
	if len(key) == 1 {
		return key[0]
	}
	return key
}

// TestTableCompositeKeyValidate: a composite key's children reference all of it, and a
// key is one column or a list, never both, without repeats.
func TestTableCompositeKeyValidate(t *testing.T) {
	cases := []struct {
		spec  passes.TableSpec
		field string
	}{
		{passes.TableSpec{Table: "o", KeyColumns: []string{"tenant", "id"}, Timestamp: "at",
			Children: []passes.ChildSpec{{Table: "c", ForeignKey: "order_id"}}}, "children[0].foreign_key"},
		{passes.TableSpec{Table: "o", Key: "id", Timestamp: "at",
			Children: []passes.ChildSpec{{Table: "c", ForeignKeyColumns: []string{"tenant", "order_id"}}}}, "children[0].foreign_key"},
		{passes.TableSpec{Table: "o", KeyColumns: []string{"tenant", "id"}, Timestamp: "at",
			Children: []passes.ChildSpec{{Table: "c", ForeignKeyColumns: []string{"tenant", "order_id"}, Children: []passes.ChildSpec{
				{Table: "g", ForeignKeyColumns: []string{"tenant", "c_id"}}}}}}, "children[0].children[0].foreign_key"},
		{passes.TableSpec{Table: "o", Key: "id", KeyColumns: []string{"tenant", "id"}, Timestamp: "at"}, "key"},
		{passes.TableSpec{Table: "o", KeyColumns: []string{"id", "id"}, Timestamp: "at"}, "key"},
		{passes.TableSpec{Table: "o", KeyColumns: []string{"tenant", "id;"}, Timestamp: "at"}, "key[1]"},
	}
	for i, tc := range cases {
		err := tc.spec.Validate("orders")
		if err == nil || !strings.Contains(err.Error(), tc.field+" ") {
			t.Errorf("case %d: error %v, want one naming %s", i, err, tc.field)
		}
	}
}

// TestTableCompositeNestedChildren: a composite key reaches grandchildren through a
// child whose own key is composite too.
func TestTableCompositeNestedChildren(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := &fixture{t: t, db: db, p: newFixturePrefix()}
		ts := map[bool]string{true: "TIMESTAMPTZ", false: "TEXT"}[db.Dialect().Name() == dialect.PG]
		f.exec("CREATE TABLE {p}orders (tenant TEXT NOT NULL, id BIGINT NOT NULL, at " + ts + " NOT NULL, PRIMARY KEY (tenant, id))")
		f.exec("CREATE TABLE {p}line (tenant TEXT NOT NULL, line_id BIGINT NOT NULL, order_id BIGINT NOT NULL, PRIMARY KEY (tenant, line_id), " +
			"FOREIGN KEY (tenant, order_id) REFERENCES {p}orders (tenant, id))")
		f.exec("CREATE TABLE {p}blob (id BIGINT PRIMARY KEY, tenant TEXT NOT NULL, line_id BIGINT NOT NULL, " +
			"FOREIGN KEY (tenant, line_id) REFERENCES {p}line (tenant, line_id))")
		t.Cleanup(func() {
			for _, table := range []string{"blob", "line", "orders"} {
				_, _ = db.ExecContext(context.Background(), "DROP TABLE IF EXISTS "+f.p+table)
			}
		})
		// Order 1 exists for both tenants; only acme's has expired. Line and blob ids
		// repeat across tenants, so only the whole key tells them apart.
		f.exec("INSERT INTO {p}orders (tenant, id, at) VALUES ('acme', 1, ?), ('beta', 1, ?), ('acme', 2, ?)", cutoffT.Add(-time.Hour), cutoffT.Add(time.Hour), cutoffT.Add(-2*time.Hour))
		f.exec("INSERT INTO {p}line (tenant, line_id, order_id) VALUES ('acme', 10, 1), ('beta', 10, 1), ('acme', 11, 2), ('beta', 11, 1)")
		f.exec("INSERT INTO {p}blob (id, tenant, line_id) VALUES (1, 'acme', 10), (2, 'beta', 10), (3, 'acme', 11), (4, 'beta', 11)")
		spec := passes.TableSpec{Table: f.p + "orders", KeyColumns: []string{"tenant", "id"}, Timestamp: "at",
			Children: []passes.ChildSpec{{Table: f.p + "line", ForeignKeyColumns: []string{"tenant", "order_id"}, KeyColumns: []string{"tenant", "line_id"},
				Children: []passes.ChildSpec{{Table: f.p + "blob", ForeignKeyColumns: []string{"tenant", "line_id"}}}}}}
		tbl := f.table(spec)
		if res := tbl.ValidateStartup(context.Background()); res.Failed() {
			t.Fatal(res.Message())
		}
		if n := passtest.Sweep(t, tbl, 1, cutoffT).Deleted; n != 2 {
			t.Fatalf("deleted %d orders, want 2", n)
		}
		if got := f.ids("blob"); !slices.Equal(got, []int64{2, 4}) {
			t.Fatalf("blobs left %v, want beta's [2 4]", got)
		}
		var lines []string
		if err := db.NewRaw("SELECT tenant FROM "+f.p+"line ORDER BY line_id").Scan(context.Background(), &lines); err != nil || !slices.Equal(lines, []string{"beta", "beta"}) {
			t.Fatalf("lines left %v %v, want beta's two", lines, err)
		}
	})
}
