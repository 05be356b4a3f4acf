package passes_test

import (
	"context"
	"strings"
	"testing"

	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/dbtest"
)

// A filter matching values of every column type is stated in the conformance suite
// (passes/passtest, filter area).

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
