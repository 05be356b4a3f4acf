package passtest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/retentionkit/retention/core/clock"
	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/ledger"
)

// keyColumn is one column of a primary key under test, its type in PostgreSQL's terms
// (DB.Type spells it for the database).
type keyColumn struct{ name, typ string }

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
	{name: "bigint", cols: []keyColumn{{"id", "BIGINT"}}, value: func(p int) []any { return []any{int64(p)*1_000_000_007 - 5_000_000_000} }},
	{name: "integer", cols: []keyColumn{{"id", "INTEGER"}}, value: func(p int) []any { return []any{int32(p*37 - 400)} }},
	{name: "smallint", cols: []keyColumn{{"id", "SMALLINT"}}, value: func(p int) []any { return []any{int16(p*3 - 40)} }},
	{name: "uuid", cols: []keyColumn{{"id", "UUID"}}, value: func(p int) []any {
		return []any{fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", uint32(p*2654435761), p, p, p, p*p)}
	}},
	{name: "numeric", cols: []keyColumn{{"id", "NUMERIC(12,3)"}}, value: func(p int) []any { return []any{float64(p)*1.5 + 0.25} }},
	{name: "text", cols: []keyColumn{{"id", "TEXT"}}, value: func(p int) []any {
		return []any{fmt.Sprintf("%c-%d key", "aBcDe"[p%5], p)}
	}},
	{name: "varchar", cols: []keyColumn{{"id", "VARCHAR(40)"}}, value: func(p int) []any {
		return []any{fmt.Sprintf("%c%d", "ZyXwV"[p%5], p*7)}
	}},
	{name: "timestamptz", cols: []keyColumn{{"id", "TIMESTAMPTZ"}}, value: func(p int) []any {
		return []any{time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(p*p)*time.Minute + time.Duration(p)*time.Microsecond)}
	}},
	{name: "timestamp", cols: []keyColumn{{"id", "TIMESTAMP"}}, value: func(p int) []any {
		return []any{time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(p) * 90 * time.Second)}
	}},
	{name: "composite", cols: []keyColumn{{"tenant", "TEXT"}, {"id", "BIGINT"}}, value: func(p int) []any {
		return []any{[]string{"acme", "Beta", "corp"}[p%3], int64(100 - p/3)}
	}},
}

// keyTypeBehaviours: a table keyed by any common key type, composite keys included,
// sweeps through several batches, a bisection and its children alike, and a
// quarantined row's stored key reads back as the values that leave it out.
func keyTypeBehaviours() []behaviour {
	var bs []behaviour
	for _, kt := range keyTypes {
		bs = append(bs,
			behaviour{name: kt.name + " sweeps", run: func(t *testing.T, db *DB) { sweepKeyType(t, db, kt, false) }},
			behaviour{name: kt.name + " sweeps with children", run: func(t *testing.T, db *DB) { sweepKeyType(t, db, kt, true) }},
			behaviour{name: kt.name + " quarantined key round-trips", run: func(t *testing.T, db *DB) { quarantineKeyType(t, db, kt) }},
		)
	}
	return append(bs, behaviour{name: "composite key reaches grandchildren", run: compositeNestedChildren})
}

// keyTable is a table k keyed by a key type, with a delete child kc, a set_null child
// kn, a block child kh and an unlisted child ku, all referencing the whole key.
type keyTable struct {
	t  *testing.T
	db *DB
	kt keyType
}

func newKeyTable(t *testing.T, db *DB, kt keyType) *keyTable {
	f := &keyTable{t: t, db: db, kt: kt}
	var defs, names, refDefs, refs []string
	for _, c := range kt.cols {
		typ := db.Type(c.typ)
		defs = append(defs, c.name+" "+typ+" NOT NULL")
		names = append(names, c.name)
		refDefs = append(refDefs, "ref_"+c.name+" "+typ)
		refs = append(refs, "ref_"+c.name)
	}
	fk := fmt.Sprintf("FOREIGN KEY (%s) REFERENCES k (%s)", strings.Join(refs, ", "), strings.Join(names, ", "))
	f.exec(fmt.Sprintf("CREATE TABLE k (%s, n INTEGER NOT NULL, at %s NOT NULL, PRIMARY KEY (%s))", strings.Join(defs, ", "), db.Type("TIMESTAMPTZ"), strings.Join(names, ", ")))
	f.exec("CREATE INDEX k_at ON k (at)") // MySQL refuses a timestamp no index leads
	for _, child := range []string{"kc", "kn", "kh", "ku"} {
		f.exec(fmt.Sprintf("CREATE TABLE %s (id INTEGER PRIMARY KEY, %s, %s)", child, strings.Join(refDefs, ", "), fk))
	}
	return f
}

func (f *keyTable) exec(query string, args ...any) {
	f.t.Helper()
	if _, err := f.db.ExecContext(context.Background(), query, args...); err != nil {
		f.t.Fatalf("%s: %v", query, err)
	}
}

// row inserts row n with the key of p at at, and a child in each of the given tables.
func (f *keyTable) row(n, p int, at time.Time, children ...string) {
	f.t.Helper()
	key := f.kt.value(p)
	marks := strings.TrimSuffix(strings.Repeat("?, ", len(key)), ", ")
	var cols []string
	for _, c := range f.kt.cols {
		cols = append(cols, c.name)
	}
	f.exec(fmt.Sprintf("INSERT INTO k (%s, n, at) VALUES (%s, ?, ?)", strings.Join(cols, ", "), marks), append(key, n, at)...)
	for i, c := range cols {
		cols[i] = "ref_" + c
	}
	for _, child := range children {
		f.exec(fmt.Sprintf("INSERT INTO %s (id, %s) VALUES (?, %s)", child, strings.Join(cols, ", "), marks), append([]any{n}, key...)...)
	}
}

func (f *keyTable) spec(children bool) passes.TableSpec {
	var key, refs []string
	for _, c := range f.kt.cols {
		key = append(key, c.name)
		refs = append(refs, "ref_"+c.name)
	}
	s := passes.TableSpec{Table: "k", Timestamp: "at"}
	child := func(table string, on passes.OnDelete) passes.ChildSpec {
		c := passes.ChildSpec{Table: table, OnDelete: on}
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

// ns returns the integers query reads (column n of k, id of a child), sorted.
func (f *keyTable) ns(query string) []int {
	f.t.Helper()
	var ns []int
	if err := f.db.NewRaw(query).Scan(context.Background(), &ns); err != nil {
		f.t.Fatalf("%s: %v", query, err)
	}
	slices.Sort(ns)
	return ns
}

// sweepKeyType sweeps a table keyed by kt through several batches (so the cursor goes
// back to the server), a bisection (a row an unlisted table holds) and, with children,
// delete, set_null and block children referencing the whole key; the dry run counts
// what the sweep deletes.
func sweepKeyType(t *testing.T, db *DB, kt keyType, withChildren bool) {
	f := newKeyTable(t, db, kt)
	const rows, expired = 30, 24
	want := []int{7} // held by the unlisted child: skipped
	for n := range rows {
		p := (n*17 + 5) % rows                                   // key order differs from row order
		at := auditCutoff.Add(-time.Duration(n/3+1) * time.Hour) // three rows a timestamp
		if n >= expired {
			at = auditCutoff.Add(time.Duration(n) * time.Minute)
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
	tbl, err := passes.NewTable(db.DB, "keys", f.spec(withChildren))
	if err != nil {
		t.Fatal(err)
	}
	if res := tbl.ValidateStartup(context.Background()); res.Failed() {
		t.Fatalf("startup validation: %s", res.Message())
	}
	dry, err := tbl.DryRun(context.Background(), auditCutoff)
	if err != nil {
		t.Fatal(err)
	}
	res := Sweep(t, tbl, 4, auditCutoff)
	if got := f.ns("SELECT n FROM k"); !slices.Equal(got, want) {
		t.Fatalf("kept rows %v, want %v", got, want)
	}
	deleted := rows - len(want)
	if res.Deleted != deleted || len(res.Skipped) != 1 || dry.Eligible != int64(deleted+1) {
		t.Fatalf("sweep deleted %d, skipped %v; dry run %+v; want %d deleted, 1 skipped, %d eligible", res.Deleted, res.Skipped, dry, deleted, deleted+1)
	}
	// A numeric or time key is reported as the database spells it.
	if got, want := fmt.Sprint(res.Skipped[0]), fmt.Sprint(skippedKey(kt.value((7*17+5)%rows))); got != want && kt.name != "numeric" && !strings.HasPrefix(kt.name, "timestamp") {
		t.Fatalf("skipped key %s, want %s", got, want)
	}
	if !withChildren {
		return
	}
	if got := f.ns("SELECT id FROM kc"); !slices.Equal(got, want) {
		t.Fatalf("delete children left %v, want those of the kept rows %v", got, want)
	}
	refCol := "ref_" + kt.cols[0].name
	if got := f.ns("SELECT id FROM kn WHERE " + refCol + " IS NOT NULL"); !slices.Equal(got, want) {
		t.Fatalf("set_null children still referencing %v, want those of the kept rows %v", got, want)
	}
	if got := f.ns("SELECT id FROM kn"); len(got) != rows {
		t.Fatalf("set_null children: %d left, want all %d", len(got), rows)
	}
}

func skippedKey(key []any) any {
	if len(key) == 1 {
		return key[0]
	}
	return key
}

// quarantineKeyType: a quarantined row's stored key reads back as the values that leave
// the row out of the next sweep (no second attempt before it is due), and the deleted
// row's key matches it, so it leaves quarantine.
func quarantineKeyType(t *testing.T, db *DB, kt keyType) {
	f := newKeyTable(t, db, kt)
	for n := range 6 {
		var children []string
		if n == 2 {
			children = []string{"ku"}
		}
		f.row(n, n, auditCutoff.Add(-time.Duration(n+1)*time.Hour), children...)
	}
	l := migratedLedger(t, db)
	clk := clock.NewManual(time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC))
	tbl, err := passes.NewTable(db.DB, "keys", f.spec(false))
	if err != nil {
		t.Fatal(err)
	}
	tbl = tbl.WithQuarantine(l.Quarantine(nil).WithClock(clk))
	quarantinedRows := func() []ledger.QuarantinedRow {
		t.Helper()
		rows, err := l.QuarantinedRows(context.Background(), "keys")
		if err != nil {
			t.Fatal(err)
		}
		return rows
	}
	if res := Sweep(t, tbl, 2, auditCutoff); res.Deleted != 5 || len(res.Skipped) != 1 {
		t.Fatalf("first sweep: deleted %d, skipped %v", res.Deleted, res.Skipped)
	}
	Sweep(t, tbl, 2, auditCutoff)
	if rows := quarantinedRows(); len(rows) != 1 || rows[0].Attempts != 1 {
		t.Fatalf("quarantine after a second sweep = %+v; want the row left out, not tried again", rows)
	}
	f.exec("DELETE FROM ku")
	clk.Advance(ledger.DefaultQuarantineBackoff)
	if res := Sweep(t, tbl, 2, auditCutoff); res.Deleted != 1 || len(quarantinedRows()) != 0 {
		t.Fatalf("after the reference went: deleted %d, quarantine %+v", res.Deleted, quarantinedRows())
	}
}

// compositeNestedChildren: a composite key reaches grandchildren through a child whose
// own key is composite too.
func compositeNestedChildren(t *testing.T, db *DB) {
	ctx := context.Background()
	exec := func(query string, args ...any) {
		t.Helper()
		if _, err := db.ExecContext(ctx, query, args...); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
	}
	text := db.Type("TEXT") // a key column: MySQL indexes no unbounded TEXT
	exec("CREATE TABLE orders (tenant " + text + " NOT NULL, id BIGINT NOT NULL, at " + db.Type("TIMESTAMPTZ") + " NOT NULL, PRIMARY KEY (tenant, id))")
	exec("CREATE INDEX orders_at ON orders (at)") // MySQL refuses a timestamp no index leads
	exec("CREATE TABLE line (tenant " + text + " NOT NULL, line_id BIGINT NOT NULL, order_id BIGINT NOT NULL, PRIMARY KEY (tenant, line_id), " +
		"FOREIGN KEY (tenant, order_id) REFERENCES orders (tenant, id))")
	exec("CREATE TABLE note (id BIGINT PRIMARY KEY, tenant " + text + " NOT NULL, line_id BIGINT NOT NULL, " +
		"FOREIGN KEY (tenant, line_id) REFERENCES line (tenant, line_id))")
	// Order 1 exists for both tenants; only acme's has expired. Line and note ids
	// repeat across tenants, so only the whole key tells them apart.
	exec("INSERT INTO orders (tenant, id, at) VALUES ('acme', 1, ?), ('beta', 1, ?), ('acme', 2, ?)", auditCutoff.Add(-time.Hour), auditCutoff.Add(time.Hour), auditCutoff.Add(-2*time.Hour))
	exec("INSERT INTO line (tenant, line_id, order_id) VALUES ('acme', 10, 1), ('beta', 10, 1), ('acme', 11, 2), ('beta', 11, 1)")
	exec("INSERT INTO note (id, tenant, line_id) VALUES (1, 'acme', 10), (2, 'beta', 10), (3, 'acme', 11), (4, 'beta', 11)")
	spec := passes.TableSpec{Table: "orders", KeyColumns: []string{"tenant", "id"}, Timestamp: "at",
		Children: []passes.ChildSpec{{Table: "line", ForeignKeyColumns: []string{"tenant", "order_id"}, KeyColumns: []string{"tenant", "line_id"},
			Children: []passes.ChildSpec{{Table: "note", ForeignKeyColumns: []string{"tenant", "line_id"}}}}}}
	tbl, err := passes.NewTable(db.DB, "orders", spec)
	if err != nil {
		t.Fatal(err)
	}
	if res := tbl.ValidateStartup(ctx); res.Failed() {
		t.Fatal(res.Message())
	}
	if n := Sweep(t, tbl, 1, auditCutoff).Deleted; n != 2 {
		t.Fatalf("deleted %d orders, want 2", n)
	}
	requireTableIDs(t, db, "note", []int64{2, 4}, "beta's notes stay")
	var lines []string
	if err := db.NewRaw("SELECT tenant FROM line ORDER BY line_id").Scan(ctx, &lines); err != nil || !slices.Equal(lines, []string{"beta", "beta"}) {
		t.Fatalf("lines left %v %v, want beta's two", lines, err)
	}
}
