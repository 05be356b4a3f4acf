package passes_test

import (
	"strings"
	"testing"

	"github.com/retentionkit/retention/passes"
)

// A filter matching values of every column type, and startup refusing a filter value
// its column cannot hold, are stated in the conformance suite (passes/passtest, filter
// area).

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
