package passtest_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/passtest"
)

var cutoff = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// recorder is a testing.TB whose Fatalf records instead of stopping, so a test can see
// an assertion fail and read its message.
type recorder struct {
	testing.TB
	failures []string
}

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(format string, args ...any) {
	r.failures = append(r.failures, fmt.Sprintf(format, args...))
}

// sweep runs one sweep of the fixture's table with the real table pass at its cutoff.
func sweep(t *testing.T, db *passtest.DB, tbl *passtest.Table, spec passes.TableSpec) int {
	t.Helper()
	pass, err := passes.NewTable(db.DB, "under-test", spec)
	if err != nil {
		t.Fatal(err)
	}
	p, err := pass.Factory()(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := p.(passes.Closer); ok {
		defer c.Close()
	}
	total := 0
	for {
		n, err := p.PurgeBatch(context.Background(), 7, tbl.Cutoff)
		if err != nil {
			t.Fatal(err)
		}
		total += n
		if n < 7 {
			return total
		}
	}
}

// TestSeedPutsRowsOnBothSidesOfTheCutoff lets the real table pass decide which rows are
// expired: it must delete exactly the ones the fixture calls expired, for every
// timestamp format and for a composite key.
func TestSeedPutsRowsOnBothSidesOfTheCutoff(t *testing.T) {
	cases := []struct {
		name   string
		key    []string
		format passes.TimestampFormat
	}{
		{"native", nil, ""},
		{"unix", nil, passes.TimestampUnixSeconds},
		{"unix_ms", nil, passes.TimestampUnixMillis},
		{"composite", []string{"tenant_id", "id"}, ""},
	}
	passtest.Each(t, func(t *testing.T, db *passtest.DB) {
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				tbl := passtest.Seed(t, db, passtest.Fixture{Table: "events_" + c.name, Key: c.key, Format: c.format, Cutoff: cutoff, Expired: 23, Fresh: 9})
				if len(tbl.Expired) != 23 || len(tbl.Fresh) != 9 {
					t.Fatalf("expired %v, fresh %v", tbl.Expired, tbl.Fresh)
				}
				tbl.RequireCount(t, 32)
				if got := sweep(t, db, tbl, tbl.Spec()); got != 23 {
					t.Fatalf("the pass deleted %d rows, want 23", got)
				}
				tbl.RequireSwept(t)
				tbl.RequireKept(t, tbl.Fresh...)
				tbl.RequireDeleted(t, tbl.Expired...)
			})
		}
	})
}

// TestSeedInterleavesKeys checks the layout: the kinds alternate over the keys, the
// newest expired row is one spacing before the cutoff and the oldest fresh row is at it.
func TestSeedInterleavesKeys(t *testing.T) {
	db := passtest.SQLite(t)
	var rows []passtest.Row
	passtest.Seed(t, db, passtest.Fixture{Table: "t", Cutoff: cutoff, Expired: 5, Fresh: 3, Spacing: time.Hour,
		Columns: []passtest.Column{{Name: "note", Type: "TEXT", Value: func(r passtest.Row) any { rows = append(rows, r); return "x" }}}})
	var expired, fresh []string
	for _, r := range rows {
		if r.Expired {
			expired = append(expired, r.Key.String()+"@"+r.At.Sub(cutoff).String())
		} else {
			fresh = append(fresh, r.Key.String()+"@"+r.At.Sub(cutoff).String())
		}
	}
	wantExpired := []string{"1@-1h0m0s", "2@-2h0m0s", "4@-3h0m0s", "5@-4h0m0s", "7@-5h0m0s"}
	wantFresh := []string{"3@0s", "6@1h0m0s", "8@2h0m0s"}
	if !slices.Equal(expired, wantExpired) || !slices.Equal(fresh, wantFresh) {
		t.Fatalf("expired %v, fresh %v; want %v, %v", expired, fresh, wantExpired, wantFresh)
	}
}

// TestExtraColumnsReachTheDatabase fills a filter column and has the pass honour it.
func TestExtraColumnsReachTheDatabase(t *testing.T) {
	passtest.Each(t, func(t *testing.T, db *passtest.DB) {
		tbl := passtest.Seed(t, db, passtest.Fixture{Table: "jobs", Cutoff: cutoff, Expired: 6, Fresh: 2,
			Columns: []passtest.Column{
				{Name: "state", Type: "TEXT NOT NULL", Value: func(r passtest.Row) any {
					return map[bool]string{true: "running", false: "done"}[r.Key[0]%3 == 0]
				}},
				{Name: "note", Type: "TEXT DEFAULT 'none'"},
			}})
		spec := tbl.Spec()
		spec.Filter = &passes.Filter{Column: "state", In: []any{"done"}}
		sweep(t, db, tbl, spec)
		var running []passtest.Key
		for _, k := range tbl.Expired {
			if k[0]%3 == 0 {
				running = append(running, k)
			}
		}
		if len(running) == 0 {
			t.Fatal("the fixture has no running expired row")
		}
		tbl.RequireLeft(t, append(running, tbl.Fresh...)...)
	})
}

// TestAssertionsNameTheOffendingKeys makes every assertion fail and reads its message.
func TestAssertionsNameTheOffendingKeys(t *testing.T) {
	passtest.Each(t, func(t *testing.T, db *passtest.DB) {
		tbl := passtest.Seed(t, db, passtest.Fixture{Table: "audit", Cutoff: cutoff, Expired: 3, Fresh: 2})
		// expired 1, 2, 4; fresh 3, 5. Delete one of each kind by hand.
		if _, err := db.ExecContext(context.Background(), "DELETE FROM audit WHERE id IN (2, 3)"); err != nil {
			t.Fatal(err)
		}
		cases := []struct {
			name string
			run  func(tb testing.TB)
			want string
		}{
			{"kept", func(tb testing.TB) { tbl.RequireKept(tb, tbl.Fresh...) }, "audit: 1 of 2 rows that should be kept are gone: keys 3"},
			{"deleted", func(tb testing.TB) { tbl.RequireDeleted(tb, tbl.Expired...) }, "audit: 2 of 3 rows that should be deleted are still there: keys 1, 4"},
			{"count", func(tb testing.TB) { tbl.RequireCount(tb, 2) }, "audit: 3 rows left, want 2; left: keys 1, 4, 5"},
			{"left", func(tb testing.TB) { tbl.RequireLeft(tb, passtest.Key{3}, passtest.Key{5}) }, "audit: 1 rows that should be kept are gone: keys 3; 2 rows that should be deleted are still there: keys 1, 4"},
			{"swept", func(tb testing.TB) { tbl.RequireSwept(tb) }, "keys 3; 2 rows that should be deleted are still there: keys 1, 4"},
		}
		for _, c := range cases {
			r := &recorder{TB: t}
			c.run(r)
			if len(r.failures) != 1 || !strings.Contains(r.failures[0], c.want) {
				t.Errorf("%s: failures %q, want one containing %q", c.name, r.failures, c.want)
			}
		}
		passing := []func(tb testing.TB){
			func(tb testing.TB) { tbl.RequireKept(tb, passtest.Key{1}, passtest.Key{5}) },
			func(tb testing.TB) { tbl.RequireDeleted(tb, passtest.Key{2}, passtest.Key{3}) },
			func(tb testing.TB) { tbl.RequireCount(tb, 3) },
			func(tb testing.TB) { tbl.RequireLeft(tb, passtest.Key{5}, passtest.Key{4}, passtest.Key{1}) },
		}
		for i, run := range passing {
			r := &recorder{TB: t}
			if run(r); len(r.failures) != 0 {
				t.Errorf("passing case %d failed: %q", i, r.failures)
			}
		}
	})
}

// TestLongListsAreCut keeps a failure readable when thousands of rows are wrong.
func TestLongListsAreCut(t *testing.T) {
	tbl := passtest.Seed(t, passtest.SQLite(t), passtest.Fixture{Table: "big", Cutoff: cutoff, Expired: 50})
	r := &recorder{TB: t}
	tbl.RequireSwept(r)
	if len(r.failures) != 1 || !strings.Contains(r.failures[0], "50 rows that should be deleted are still there: keys 1, 2,") || !strings.HasSuffix(r.failures[0], "20 and 30 more") {
		t.Fatalf("failures %q", r.failures)
	}
}

// TestBadFixtureFails names every problem and creates nothing.
func TestBadFixtureFails(t *testing.T) {
	db := passtest.SQLite(t)
	r := &recorder{TB: t}
	if tbl := passtest.Seed(r, db, passtest.Fixture{Table: "bad name", Format: "iso", Expired: -1}); tbl != nil {
		t.Fatal("a bad fixture returned a table")
	}
	for _, want := range []string{`"bad name" is not a plain identifier`, "Cutoff is not set", "must not be negative", `Format "iso"`} {
		if len(r.failures) != 1 || !strings.Contains(r.failures[0], want) {
			t.Fatalf("failures %q, want one containing %q", r.failures, want)
		}
	}
	cases := []struct {
		format passes.TimestampFormat
		cutoff time.Time
		space  time.Duration
		want   string
	}{
		{passes.TimestampUnixSeconds, cutoff.Add(300 * time.Millisecond), 0, "whole multiples of 1s"},
		{passes.TimestampUnixSeconds, cutoff, 1500 * time.Millisecond, "whole multiples of 1s"},
		{"", cutoff.Add(time.Microsecond), 0, "whole multiples of 1ms"},
		{passes.TimestampUnixMillis, cutoff, time.Microsecond, "whole multiples of 1ms"},
	}
	for _, c := range cases {
		r := &recorder{TB: t}
		passtest.Seed(r, db, passtest.Fixture{Table: "t", Format: c.format, Cutoff: c.cutoff, Spacing: c.space, Expired: 1})
		if len(r.failures) != 1 || !strings.Contains(r.failures[0], c.want) {
			t.Errorf("%s at %v spaced %v: failures %q, want %q", c.format, c.cutoff, c.space, r.failures, c.want)
		}
	}
}

// TestMillisecondCutoffSplitsExactly: a cutoff off the whole second still splits the
// rows where the pass does, on every format that stores it exactly.
func TestMillisecondCutoffSplitsExactly(t *testing.T) {
	passtest.Each(t, func(t *testing.T, db *passtest.DB) {
		for _, format := range []passes.TimestampFormat{passes.TimestampNative, passes.TimestampUnixMillis} {
			tbl := passtest.Seed(t, db, passtest.Fixture{Table: "ms_" + string(format), Format: format, Cutoff: cutoff.Add(123 * time.Millisecond), Spacing: time.Millisecond, Expired: 9, Fresh: 9})
			if got := sweep(t, db, tbl, tbl.Spec()); got != 9 {
				t.Fatalf("%s: the pass deleted %d rows, want 9", format, got)
			}
			tbl.RequireSwept(t)
		}
	})
}

// TestPostgresSchemasAreApart seeds one table name twice in one test: each handle has a
// schema of its own.
func TestPostgresSchemasAreApart(t *testing.T) {
	a, b := passtest.Postgres(t), passtest.Postgres(t)
	ta := passtest.Seed(t, a, passtest.Fixture{Table: "sessions", Cutoff: cutoff, Expired: 2})
	tb := passtest.Seed(t, b, passtest.Fixture{Table: "sessions", Cutoff: cutoff, Fresh: 3})
	ta.RequireCount(t, 2)
	tb.RequireCount(t, 3)
}
