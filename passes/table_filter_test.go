package passes_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/dbtest"
)

var (
	filterT1 = time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	filterT2 = time.Date(2026, 1, 2, 10, 0, 0, 123000, time.UTC)
	uuidA    = "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"
	uuidB    = "b1eebc99-9c0b-4ef8-bb6d-6bb9bd380a12"
)

// TestTableFilterValues filters on a column of every type a filter meets, with the
// values YAML gives (text, integers, true/false, null; a quoted number is text), and
// null matching rows whose column IS NULL. Every row is expired: the filter alone
// decides which go.
func TestTableFilterValues(t *testing.T) {
	cases := []struct {
		name       string
		pg, sqlite string
		rows       []any
		in         []any
		deleted    []int // indexes into rows
	}{
		{"text", "TEXT", "TEXT", []any{"done", "pending", nil, "failed"}, []any{"done", nil}, []int{0, 2}},
		{"text only null", "TEXT", "TEXT", []any{"done", nil, "pending", nil}, []any{nil}, []int{1, 3}},
		{"text without null", "TEXT", "TEXT", []any{"done", nil, "failed"}, []any{"done", "failed"}, []int{0, 2}},
		{"integer", "INTEGER", "INTEGER", []any{1, 2, nil, 3}, []any{1, "3", nil}, []int{0, 2, 3}},
		{"bigint", "BIGINT", "BIGINT", []any{int64(1) << 40, 2, nil}, []any{int64(1) << 40}, []int{0}},
		{"boolean", "BOOLEAN", "BOOLEAN", []any{true, false, nil, true}, []any{true, nil}, []int{0, 2, 3}},
		{"boolean false", "BOOLEAN", "BOOLEAN", []any{true, false, nil}, []any{false}, []int{1}},
		{"timestamp", "TIMESTAMPTZ", "TEXT", []any{filterT1, filterT2, nil}, []any{filterT2, nil}, []int{1, 2}},
		{"uuid", "UUID", "TEXT", []any{uuidA, uuidB, nil}, []any{uuidB}, []int{1}},
		{"numeric", "NUMERIC(10,2)", "NUMERIC", []any{1.5, 2.25, nil, 3}, []any{1.5, "3", nil}, []int{0, 2, 3}},
		{"real", "DOUBLE PRECISION", "REAL", []any{0.5, 2.0, nil}, []any{2}, []int{1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dbtest.Each(t, func(t *testing.T, db *bun.DB) {
				typ := tc.sqlite
				if db.Dialect().Name() == dialect.PG {
					typ = tc.pg
				}
				f := &fixture{t: t, db: db, p: newFixturePrefix()}
				ts := map[bool]string{true: "TIMESTAMPTZ", false: "TEXT"}[db.Dialect().Name() == dialect.PG]
				f.exec("CREATE TABLE {p}f (id INTEGER PRIMARY KEY, at " + ts + " NOT NULL, v " + typ + ")")
				t.Cleanup(func() { _, _ = db.ExecContext(context.Background(), "DROP TABLE "+f.p+"f") })
				for i, v := range tc.rows {
					f.exec("INSERT INTO {p}f (id, at, v) VALUES (?, ?, ?)", i, cutoffT.Add(-time.Hour), v)
				}
				tbl, err := passes.NewTable(db, "filtered", passes.TableSpec{Table: f.p + "f", Key: "id", Timestamp: "at",
					Filter: &passes.Filter{Column: "v", In: tc.in}})
				if err != nil {
					t.Fatal(err)
				}
				if res := tbl.ValidateStartup(context.Background()); res.Failed() {
					t.Fatalf("startup: %s", res.Message())
				}
				dry, err := tbl.DryRun(context.Background(), cutoffT)
				if err != nil {
					t.Fatal(err)
				}
				res := sweep(t, tbl, 2, cutoffT)
				var want []int64
				for i := range tc.rows {
					if !slices.Contains(tc.deleted, i) {
						want = append(want, int64(i))
					}
				}
				if got := f.ids("f"); !slices.Equal(got, want) {
					t.Fatalf("filter in %v keeps %v, want %v", tc.in, got, want)
				}
				if res.deleted != len(tc.deleted) || dry.Eligible != int64(len(tc.deleted)) {
					t.Fatalf("deleted %d, dry run %d; want %d", res.deleted, dry.Eligible, len(tc.deleted))
				}
			})
		})
	}
}

// TestTableFilterRefusedValues: a value that is not a single value is refused when the
// declaration is validated, naming the field, instead of failing every sweep.
func TestTableFilterRefusedValues(t *testing.T) {
	for _, in := range [][]any{{[]any{"a"}}, {map[string]any{"a": 1}}, {"done", struct{}{}}} {
		spec := passes.TableSpec{Table: "t", Key: "id", Timestamp: "at", Filter: &passes.Filter{Column: "state", In: in}}
		err := spec.Validate("p")
		if err == nil || !strings.Contains(err.Error(), "filter.in[") {
			t.Errorf("in %v: error %v, want one naming filter.in[i]", in, err)
		}
	}
}

// TestTableFilterStartupTypes: on PostgreSQL a filter value the column's type cannot
// hold fails startup validation, naming the filter.
func TestTableFilterStartupTypes(t *testing.T) {
	db := dbtest.Postgres(t)
	f := &fixture{t: t, db: db, p: newFixturePrefix()}
	f.exec("CREATE TABLE {p}f (id INTEGER PRIMARY KEY, at TIMESTAMPTZ NOT NULL, n INTEGER, b BOOLEAN)")
	t.Cleanup(func() { _, _ = db.ExecContext(context.Background(), "DROP TABLE "+f.p+"f") })
	for _, filter := range []passes.Filter{{Column: "n", In: []any{"done"}}, {Column: "b", In: []any{"maybe", nil}}} {
		tbl, err := passes.NewTable(db, "typed", passes.TableSpec{Table: f.p + "f", Key: "id", Timestamp: "at", Filter: &filter})
		if err != nil {
			t.Fatal(err)
		}
		res := tbl.ValidateStartup(context.Background())
		if !res.Failed() || !strings.Contains(res.Message(), "filter on "+filter.Column) {
			t.Errorf("filter %v: startup %v %q, want a failure naming the filter", filter, res.Failed(), res.Message())
		}
	}
}
