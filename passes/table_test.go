package passes_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/retentionkit/retention/core"
	"github.com/retentionkit/retention/passes"
)

// The table behaviours on a database (keep-set, cutoff, bisection, dry run,
// cancellation) are stated once in the conformance suite, passes/passtest.

func TestTableSpecRejectsBadIdentifiers(t *testing.T) {
	tests := []struct {
		name  string
		spec  passes.TableSpec
		field string
	}{
		{"quote in table", passes.TableSpec{Table: `audit"; DROP TABLE users; --`, Key: "id", Timestamp: "ts"}, "table"},
		{"semicolon in key", passes.TableSpec{Table: "audit", Key: "id;", Timestamp: "ts"}, "key"},
		{"space in timestamp", passes.TableSpec{Table: "audit", Key: "id", Timestamp: "occurred at"}, "timestamp"},
		{"empty key", passes.TableSpec{Table: "audit", Timestamp: "ts"}, "key"},
		{"filter column", passes.TableSpec{Table: "audit", Key: "id", Timestamp: "ts", Filter: &passes.Filter{Column: "state'", In: []any{"x"}}}, "filter.column"},
		{"filter without values", passes.TableSpec{Table: "audit", Key: "id", Timestamp: "ts", Filter: &passes.Filter{Column: "state"}}, "filter.in"},
		{"where with two statements", passes.TableSpec{Table: "audit", Key: "id", Timestamp: "ts", Where: "true; DELETE FROM users"}, "where"},
		{"nested child table", passes.TableSpec{Table: "audit", Key: "id", Timestamp: "ts", Children: []passes.ChildSpec{
			{Table: "a", ForeignKey: "audit_id", Children: []passes.ChildSpec{{Table: "b c", ForeignKey: "a_id"}}},
		}}, "children[0].children[0].table"},
		{"unknown on_delete", passes.TableSpec{Table: "audit", Key: "id", Timestamp: "ts", Children: []passes.ChildSpec{{Table: "a", ForeignKey: "x", OnDelete: "cascade"}}}, "children[0].on_delete"},
		{"nested block", passes.TableSpec{Table: "audit", Key: "id", Timestamp: "ts", Children: []passes.ChildSpec{
			{Table: "a", ForeignKey: "audit_id", Children: []passes.ChildSpec{{Table: "b", ForeignKey: "a_id", OnDelete: passes.OnDeleteBlock}}},
		}}, "children[0].children[0].on_delete"},
		{"timestamp format", passes.TableSpec{Table: "audit", Key: "id", Timestamp: "ts", TimestampFormat: "epoch"}, "timestamp_format"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.spec.Validate("audit-log")
			var ve *core.ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("Validate = %v, want a validation error", err)
			}
			msgs, ok := ve.Fields[tc.field]
			if !ok || !strings.Contains(msgs[0], `pass "audit-log"`) || !strings.Contains(msgs[0], tc.field) {
				t.Fatalf("fields = %v, want %s naming the pass", ve.Fields, tc.field)
			}
		})
	}
	if err := (passes.TableSpec{Table: "public.audit_log", Key: "id", Timestamp: "occurred_at"}).Validate("p"); err != nil {
		t.Fatalf("a schema-qualified table is refused: %v", err)
	}
}
