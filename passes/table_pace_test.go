package passes_test

import (
	"strings"
	"testing"

	"github.com/retentionkit/retention/passes"
)

func TestProbeQueryValidate(t *testing.T) {
	refused := []struct{ query, problem string }{
		{"DELETE FROM audit_log", "SELECT or WITH"},
		{"SELECT 1; DELETE FROM audit_log", "';'"},
		{"SELECT 1 -- x", "comment"},
		{"SELECT 1)", "closes a parenthesis"},
		{"SELECT $$x$$", "'$'"},
		{"  ", "blank"},
	}
	for _, tc := range refused {
		spec := passes.TableSpec{Table: "audit_log", Key: "id", Timestamp: "occurred_at", ProbeQuery: tc.query}
		err := spec.Validate("audit")
		if err == nil || !strings.Contains(err.Error(), "probe_query") || !strings.Contains(err.Error(), tc.problem) || !strings.Contains(err.Error(), `pass "audit"`) {
			t.Errorf("probe_query %q: error %v, want one naming the pass, probe_query and %q", tc.query, err, tc.problem)
		}
	}
	for _, q := range []string{"SELECT 1", "select id from audit_log where id = 7", "WITH x AS (SELECT 1) SELECT * FROM x"} {
		spec := passes.TableSpec{Table: "audit_log", Key: "id", Timestamp: "occurred_at", ProbeQuery: q}
		if err := spec.Validate("audit"); err != nil {
			t.Errorf("probe_query %q refused: %v", q, err)
		}
	}
}

// The probe and replica lag on every database are the conformance suite's pace area;
// the sessions a sweep's backend blocks are PostgreSQL's (passes/driver/postgres).
