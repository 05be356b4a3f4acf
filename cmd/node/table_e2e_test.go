package main

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestTableDeclarationsEndToEnd: through the node, a where that could leave its
// parentheses or is not a condition over the table is refused by validate (exit 2,
// nothing deleted), and a filter listing null sweeps instead of panicking.
func TestTableDeclarationsEndToEnd(t *testing.T) {
	t.Parallel()
	eachDriver(t, func(t *testing.T, e *env) {
		e.seed(200)
		before := e.count("1 = 1")
		const filter = "    filter: { column: state, in: [done] }\n"
		for _, tc := range []struct{ where, want string }{
			{`"true)) OR ((true"`, "where"},
			{`"no_such_column = 1"`, "where"},
		} {
			path := e.config("", "")
			e.edit(path, filter, filter+"    where: "+tc.where+"\n")
			for _, cmd := range []string{"validate", "sweep"} {
				r := retention(t, cmd, "--config", path, "--drain")
				if cmd == "validate" {
					r = retention(t, cmd, "--config", path)
				}
				if r.code != 2 || !strings.Contains(r.stderr, tc.want) || e.count("1 = 1") != before {
					t.Fatalf("%s with where %s: exit %d, rows %d -> %d, stderr %q; want exit 2 naming %s, nothing deleted", cmd, tc.where, r.code, before, e.count("1 = 1"), r.stderr, tc.want)
				}
			}
		}

		path := e.config("", "")
		e.edit(path, filter, "    filter: { column: state, in: [done, null] }\n")
		r := retention(t, "sweep", "--config", path, "--drain")
		if r.code != 0 || strings.Contains(r.stderr, "panic") {
			t.Fatalf("filter with null: exit %d: %s", r.code, r.stderr)
		}
		cutoff := time.Now().Add(-30 * 24 * time.Hour).Unix()
		if left := e.count(fmt.Sprintf("occurred_at < %d AND state = 'done' AND id NOT IN (SELECT audit_log_id FROM %slegal_hold)", cutoff, e.prefix)); left != 0 {
			t.Fatalf("%d expired rows left", left)
		}
		if kept := e.count("state = 'pending'"); kept == 0 {
			t.Fatal("the filter deleted pending rows")
		}
	})
}
