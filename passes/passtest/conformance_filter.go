package passtest

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/retentionkit/retention/passes"
)

// filterCase is a filter on a column of one type: the column's type (in PostgreSQL's
// terms; see DB.Types), the rows' values, the filter's values as YAML gives them, and
// the rows it deletes.
type filterCase struct {
	name    string
	typ     string
	rows    []any
	in      []any
	deleted []int // indexes into rows
}

var (
	filterT1 = time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	filterT2 = time.Date(2026, 1, 2, 10, 0, 0, 123000, time.UTC)
)

// filterBehaviours: a filter matches values of every column type a filter meets, with
// null matching rows whose column IS NULL; a where that would break out of its
// parentheses is refused before anything runs, and an accepted one keeps what it says;
// a filter value the column's type cannot hold fails startup.
func filterBehaviours() []behaviour {
	const uuidA, uuidB = "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "b1eebc99-9c0b-4ef8-bb6d-6bb9bd380a12"
	cases := []filterCase{
		{"text", "TEXT", []any{"done", "pending", nil, "failed"}, []any{"done", nil}, []int{0, 2}},
		{"text only null", "TEXT", []any{"done", nil, "pending", nil}, []any{nil}, []int{1, 3}},
		{"text without null", "TEXT", []any{"done", nil, "failed"}, []any{"done", "failed"}, []int{0, 2}},
		{"integer", "INTEGER", []any{1, 2, nil, 3}, []any{1, "3", nil}, []int{0, 2, 3}},
		{"bigint", "BIGINT", []any{int64(1) << 40, 2, nil}, []any{int64(1) << 40}, []int{0}},
		{"boolean", "BOOLEAN", []any{true, false, nil, true}, []any{true, nil}, []int{0, 2, 3}},
		{"boolean false", "BOOLEAN", []any{true, false, nil}, []any{false}, []int{1}},
		{"timestamp", "TIMESTAMPTZ", []any{filterT1, filterT2, nil}, []any{filterT2, nil}, []int{1, 2}},
		{"uuid", "UUID", []any{uuidA, uuidB, nil}, []any{uuidB}, []int{1}},
		{"numeric", "NUMERIC(10,2)", []any{1.5, 2.25, nil, 3}, []any{1.5, "3", nil}, []int{0, 2, 3}},
		{"real", "DOUBLE PRECISION", []any{0.5, 2.0, nil}, []any{2}, []int{1}},
	}
	var bs []behaviour
	for _, tc := range cases {
		bs = append(bs, behaviour{name: "filter on " + tc.name, run: func(t *testing.T, db *DB) { filterValues(t, db, tc) }})
	}
	return append(bs,
		behaviour{name: "where breakout deletes nothing", run: whereBreakout},
		behaviour{name: "a value the column cannot hold fails startup", run: filterStartupTypes, skip: func(target Target) string {
			if target.NoColumnTypes {
				return "its columns hold a value of any type, so a filter value of another one matches no row rather than failing"
			}
			if target.UncheckedFilterValues {
				return "GAP: the driver does not refuse a filter value its column cannot hold; the database converts it instead (see Target.UncheckedFilterValues)"
			}
			return ""
		}},
	)
}

// filterStartupTypes: a filter value the column's type cannot hold fails the startup
// checks, naming the filter, instead of failing every sweep.
func filterStartupTypes(t *testing.T, db *DB) {
	a := &audit{t: t, db: db, format: passes.TimestampNative}
	a.exec("CREATE TABLE f (id INTEGER PRIMARY KEY, at " + db.Type("TIMESTAMPTZ") + " NOT NULL, n INTEGER, b BOOLEAN)")
	for _, filter := range []passes.Filter{{Column: "n", In: []any{"done"}}, {Column: "b", In: []any{"maybe", nil}}} {
		tbl, err := passes.NewTable(db.DB, "typed", passes.TableSpec{Table: "f", Key: "id", Timestamp: "at", Filter: &filter})
		if err != nil {
			t.Fatal(err)
		}
		res := tbl.ValidateStartup(context.Background())
		if !res.Failed() || !strings.Contains(res.Message(), "filter on "+filter.Column) {
			t.Errorf("filter %v: startup failed %v %q, want a failure naming the filter", filter, res.Failed(), res.Message())
		}
	}
}

func filterValues(t *testing.T, db *DB, tc filterCase) {
	ctx := context.Background()
	typ, ts := db.Type(tc.typ), db.Type("TIMESTAMPTZ")
	a := &audit{t: t, db: db, format: passes.TimestampNative}
	a.exec("CREATE TABLE f (id INTEGER PRIMARY KEY, at " + ts + " NOT NULL, v " + typ + ")")
	a.exec("CREATE INDEX f_at ON f (at, id)") // MySQL refuses a timestamp no index leads
	for i, v := range tc.rows {
		a.exec("INSERT INTO f (id, at, v) VALUES (?, ?, ?)", i, auditCutoff.Add(-time.Hour), v)
	}
	tbl, err := passes.NewTable(db.DB, "filtered", passes.TableSpec{Table: "f", Key: "id", Timestamp: "at",
		Filter: &passes.Filter{Column: "v", In: tc.in}})
	if err != nil {
		t.Fatal(err)
	}
	if res := tbl.ValidateStartup(ctx); res.Failed() {
		t.Fatalf("startup: %s", res.Message())
	}
	dry, err := tbl.DryRun(ctx, auditCutoff)
	if err != nil {
		t.Fatal(err)
	}
	res := Sweep(t, tbl, 2, auditCutoff)
	var want []int64
	for i := range tc.rows {
		if !slices.Contains(tc.deleted, i) {
			want = append(want, int64(i))
		}
	}
	a.requireIDs("f", want, "every row is expired: the filter alone decides which go")
	if res.Deleted != len(tc.deleted) || dry.Eligible != int64(len(tc.deleted)) {
		t.Fatalf("deleted %d, dry run %d; want %d", res.Deleted, dry.Eligible, len(tc.deleted))
	}
}

// whereBreakout is the reported case: a where closing its parentheses was accepted and
// the sweep deleted rows that had not expired.
func whereBreakout(t *testing.T, db *DB) {
	a := newAudit(t, db, passes.TimestampNative)
	a.log(1, auditCutoff.Add(-time.Hour), "done")
	a.log(2, auditCutoff.Add(time.Hour), "done") // not expired
	a.log(3, auditCutoff.Add(-time.Hour), "pending")
	spec := passes.TableSpec{Table: "audit_log", Key: "id", Timestamp: "occurred_at", Where: "true)) OR ((true"}
	if _, err := passes.NewTable(db.DB, "audit", spec); err == nil {
		Sweep(t, a.table(spec), 10, auditCutoff)
		t.Fatalf("the breakout where was accepted; rows left: %v", a.ids("audit_log"))
	}
	spec.Where = "state <> 'pending' AND (id < 100 OR state = ')')"
	tbl := a.table(spec)
	if res := tbl.ValidateStartup(context.Background()); res.Failed() {
		t.Fatal(res.Message())
	}
	Sweep(t, tbl, 10, auditCutoff)
	a.requireIDs("audit_log", []int64{2, 3}, "the where keeps the pending row, the cutoff the fresh one")
}
