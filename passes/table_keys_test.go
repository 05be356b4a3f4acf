package passes_test

import (
	"strings"
	"testing"

	"github.com/retentionkit/retention/passes"
)

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
