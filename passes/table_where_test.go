package passes_test

import (
	"context"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/dbtest"
)

// whereRefused are wheres that could leave the parentheses they are pasted in, or that
// the two databases would read differently, each with a word of the expected problem.
var whereRefused = []struct{ where, problem string }{
	{"true)) OR ((true", "closes a parenthesis"},
	{"true) OR (true", "closes a parenthesis"},
	{"state = 'done'; DELETE FROM audit_log", "';'"},
	{"true --", "comment"},
	{"true /* ) */", "comment"},
	{"(state = 'done'", "open"},
	{"state = 'done)", "string literal"},
	{`"state = 1`, "quoted identifier"},
	{"state = E'\\'' OR true OR state = ''", "backslash"},
	{"state = $$x$$", "'$'"},
	{"[state] = 1", "'['"},
	{"`state` = 1", "'`'"},
	{"   ", "blank"},
	{"state = 'a\x00'", "NUL"},
}

// whereAccepted are wheres the scan must let through: parentheses, semicolons and
// comment marks inside literals and quoted identifiers do not count.
var whereAccepted = []string{
	"state <> 'pending'",
	"state <> 'a;b -- (c /* '",
	`"state" IN ('done', 'it''s')`,
	"(state = 'done' OR state = 'failed') AND id > 0",
	"NOT EXISTS (SELECT 1 FROM {p}legal_hold h WHERE h.audit_log_id = {p}audit_log.id)",
	"coalesce(state, '') <> ')'",
}

func TestTableWhereValidate(t *testing.T) {
	for _, tc := range whereRefused {
		spec := passes.TableSpec{Table: "audit_log", Key: "id", Timestamp: "occurred_at", Where: tc.where}
		err := spec.Validate("audit")
		if err == nil || !strings.Contains(err.Error(), "where") || !strings.Contains(err.Error(), tc.problem) {
			t.Errorf("where %q: error %v, want one naming where and %q", tc.where, err, tc.problem)
		}
	}
	for _, where := range whereAccepted {
		spec := passes.TableSpec{Table: "audit_log", Key: "id", Timestamp: "occurred_at", Where: where}
		if err := spec.Validate("audit"); err != nil {
			t.Errorf("where %q refused: %v", where, err)
		}
	}
}

// The breakout where deleting nothing is stated in the conformance suite (passes/passtest,
// filter area).

// TestTableWhereStartup: the database reads the where on its own, over the table, at
// startup: a where that is not a condition over the table fails, naming where.
func TestTableWhereStartup(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := newFixture(t, db, passes.TimestampNative)
		// A where that is not boolean is refused only where the database types it
		// (passes/driver/postgres, TestWhereNotBooleanRefused).
		bad := []string{"no_such_column = 1", "state = = 'x'", "id IN (SELECT id FROM " + f.p + "no_such_table)", "count(*) > 1"}
		for _, where := range bad {
			spec := f.spec()
			spec.Where = where
			res := f.table(spec).ValidateStartup(context.Background())
			if !res.Failed() || !strings.Contains(res.Message(), "where") {
				t.Errorf("where %q: startup %v %q, want a failure naming where", where, res.Failed(), res.Message())
			}
		}
		for _, where := range whereAccepted {
			spec := f.spec()
			spec.Where = replacePrefix(where, f.p)
			if res := f.table(spec).ValidateStartup(context.Background()); res.Failed() {
				t.Errorf("where %q failed startup: %s", where, res.Message())
			}
		}
	})
}
