package passes

import (
	"database/sql"
	"strings"
	"testing"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/dialect/sqlitedialect"
	"github.com/uptrace/bun/driver/pgdriver"
)

// whereSeeds are the wheres of the reported breakout and its neighbours.
var whereSeeds = []string{
	"true)) OR ((true", "true) OR (true", "state = 'done'; DELETE FROM t", "true --", "true /* ) */",
	"(state = 'done'", "state = 'done)", `"state = 1`, `state = E'\'' OR true`, "state = $$x$$", "[x] = 1",
	"`x` = 1", "   ", "state <> 'a;b -- (c /* '", `"we""ird)" IS NULL`, "(a = 1 OR b = 2) AND c IN ('x', 'y''s')",
	"NOT EXISTS (SELECT 1 FROM h WHERE h.id = t.id)", "')'", `")"`, "a = ''''",
}

// FuzzCheckWhere: checkWhere never panics, and what it accepts cannot leave the
// parentheses it is pasted in: one more closing parenthesis, or one more opening one,
// is refused, whatever the accepted text holds.
func FuzzCheckWhere(f *testing.F) {
	for _, s := range whereSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, where string) {
		if checkWhere(where) != "" {
			return
		}
		if checkWhere(where+")") == "" || checkWhere(where+" OR (true") == "" {
			t.Fatalf("accepted %q, and it still accepts a parenthesis more", where)
		}
		if checkWhere("("+where+")") != "" {
			t.Fatalf("accepted %q, but not in parentheses", where)
		}
	})
}

// FuzzIdentifier: checkIdentifier never panics, and an accepted name is letters,
// digits, _ and at most one dot: nothing bun's quoting would have to escape.
func FuzzIdentifier(f *testing.F) {
	for _, s := range []string{"audit_log", "public.audit_log", `a"b`, "a;b", "a b", "a.b.c", "", "1a", "ä", strings.Repeat("a", 64), "a--b", "a/*"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if checkIdentifier(name) != "" {
			return
		}
		if strings.Count(name, ".") > 1 || strings.ContainsFunc(name, func(r rune) bool {
			return r != '_' && r != '.' && !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
		}) {
			t.Fatalf("accepted %q", name)
		}
	})
}

// FuzzFilter: a filter built from any values validates or is refused without a
// panic, and the condition it writes on either database is one well-formed
// expression: the where scan, which knows where literals end, accepts it (unless a
// value holds a backslash, which the scan refuses in literals on principle).
func FuzzFilter(f *testing.F) {
	f.Add("done", int64(3), true, 1.5, true, uint8(0))
	f.Add("it's", int64(-1), false, 0.0, false, uint8(1))
	f.Add("') OR (true", int64(0), true, -2.5, true, uint8(2))
	f.Add(`"; DROP TABLE t; --`, int64(1)<<62, false, 1e300, false, uint8(3))
	pg := bun.NewDB(sql.OpenDB(pgdriver.NewConnector()), pgdialect.New())
	lite := bun.NewDB(sql.OpenDB(pgdriver.NewConnector()), sqlitedialect.New())
	// Never connected, but each pool runs a connection opener until closed.
	f.Cleanup(func() { pg.Close(); lite.Close() })
	f.Fuzz(func(t *testing.T, s string, i int64, b bool, x float64, null bool, shape uint8) {
		in := []any{s, i, b, x}
		if null {
			in = append(in, nil)
		}
		in = in[int(shape)%len(in):]
		spec := TableSpec{Table: "t", Key: "id", Timestamp: "at", Filter: &Filter{Column: "state", In: in}}
		if err := spec.Validate("fuzz"); err != nil {
			return
		}
		for _, db := range []*bun.DB{pg, lite} {
			cond := db.NewSelect().TableExpr("t").ColumnExpr("1").Where("?", spec.Filter.condition(bun.Ident("state"))).String()
			_, where, _ := strings.Cut(cond, " WHERE ")
			if strings.ContainsAny(s, "\\\x00") {
				continue
			}
			if problem := checkWhere(where); problem != "" {
				t.Fatalf("filter %v on %s wrote %q: %s", in, db.Dialect().Name(), where, problem)
			}
		}
	})
}
