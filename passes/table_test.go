package passes_test

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/core"
	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/dbtest"
)

func TestTableKeepSet(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := newFixture(t, db, passes.TimestampNative)
		f.log(1, cutoffT.Add(-time.Second), "done")  // expired
		f.log(2, cutoffT.Add(time.Second), "done")   // after the cutoff: kept
		f.log(3, cutoffT, "done")                    // at the cutoff: kept
		f.log(4, cutoffT.Add(-time.Hour), "pending") // filtered out: kept
		f.log(5, cutoffT.Add(-2*time.Hour), "failed")
		f.log(6, cutoffT.Add(-3*time.Hour), "done") // legal hold: kept
		f.exec("INSERT INTO {p}legal_hold (id, audit_log_id) VALUES (1, 6)")
		f.log(7, cutoffT.Add(-4*time.Hour), "done") // with children and a review
		f.exec("INSERT INTO {p}audit_attachment (id, audit_log_id) VALUES (100, 7), (101, 7)")
		f.exec("INSERT INTO {p}attachment_blob (id, attachment_id) VALUES (1000, 100), (1001, 101), (1002, 101)")
		f.exec("INSERT INTO {p}audit_review (id, audit_log_id) VALUES (50, 7), (51, 2)")
		for id := 10; id < 30; id++ {
			f.log(id, cutoffT.Add(-24*time.Hour-time.Duration(id)*time.Second), "done")
		}

		res := sweep(t, f.table(f.spec()), 4, cutoffT)

		if got, want := f.ids("audit_log"), []int64{2, 3, 4, 6}; !slices.Equal(got, want) {
			t.Fatalf("audit_log keeps %v, want %v", got, want)
		}
		if res.deleted != 23 || len(res.skipped) != 0 {
			t.Fatalf("sweep = %+v, want 23 deleted", res)
		}
		if got := f.ids("audit_attachment"); len(got) != 0 {
			t.Fatalf("attachments left: %v", got)
		}
		if got := f.ids("attachment_blob"); len(got) != 0 {
			t.Fatalf("grandchildren left: %v", got)
		}
		if got := f.ids("legal_hold"); !slices.Equal(got, []int64{1}) {
			t.Fatalf("legal holds: %v", got)
		}
		var refs []sql.NullInt64
		rows, err := db.QueryContext(context.Background(), "SELECT audit_log_id FROM "+f.p+"audit_review ORDER BY id")
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var r sql.NullInt64
			if err := rows.Scan(&r); err != nil {
				t.Fatal(err)
			}
			refs = append(refs, r)
		}
		rows.Close()
		if len(refs) != 2 || refs[0].Valid || !refs[1].Valid || refs[1].Int64 != 2 {
			t.Fatalf("review references = %v, want [nil 2]: set_null keeps the child and clears only expired parents", refs)
		}
	})
}

func TestTableTimestampFormats(t *testing.T) {
	for _, format := range []passes.TimestampFormat{passes.TimestampNative, passes.TimestampUnixSeconds, passes.TimestampUnixMillis} {
		t.Run(string(format), func(t *testing.T) {
			dbtest.Each(t, func(t *testing.T, db *bun.DB) {
				f := newFixture(t, db, format)
				cut := cutoffT.Add(500 * time.Millisecond) // between whole seconds: rounding must be exact
				f.log(1, cutoffT.Add(-time.Second), "done")
				f.log(2, cutoffT, "done") // 0.5s before the cutoff: expired
				f.log(3, cutoffT.Add(time.Second), "done")
				f.log(4, cutoffT.Add(2*time.Second), "done")
				if format != passes.TimestampUnixSeconds {
					f.log(5, cut.Add(-time.Millisecond), "done") // a millisecond before: expired
					f.log(6, cut, "done")                        // exactly at the cutoff: kept
				}
				spec := f.spec()
				spec.Filter, spec.Children = nil, nil
				sweep(t, f.table(spec), 10, cut)
				want := []int64{3, 4}
				if format != passes.TimestampUnixSeconds {
					want = []int64{3, 4, 6}
				}
				if got := f.ids("audit_log"); !slices.Equal(got, want) {
					t.Fatalf("kept %v, want %v", got, want)
				}
			})
		})
	}
}

func TestTableBisectionSkipsOnlyTheHeldRow(t *testing.T) {
	shapes := map[string]func(passes.TableSpec) passes.TableSpec{
		"with children (one transaction)":  func(s passes.TableSpec) passes.TableSpec { return s },
		"without children (one statement)": func(s passes.TableSpec) passes.TableSpec { s.Children, s.Filter = nil, nil; return s },
	}
	for shape, mutate := range shapes {
		t.Run(shape, func(t *testing.T) { testBisection(t, mutate) })
	}
}

func testBisection(t *testing.T, mutate func(passes.TableSpec) passes.TableSpec) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := newFixture(t, db, passes.TimestampNative)
		for id := 1; id <= 13; id++ {
			f.log(id, cutoffT.Add(-time.Duration(100-id)*time.Minute), "done")
		}
		f.exec("INSERT INTO {p}unlisted (id, audit_log_id) VALUES (1, 6)") // a table the pass does not know
		res := sweep(t, f.table(mutate(f.spec())), 5, cutoffT)
		if got := f.ids("audit_log"); !slices.Equal(got, []int64{6}) {
			t.Fatalf("kept %v, want only the held row 6", got)
		}
		if res.deleted != 12 || len(res.skipped) != 1 || toInt(res.skipped[0]) != 6 {
			t.Fatalf("sweep = %+v, want 12 deleted and 6 skipped", res)
		}
		if res.batches != 3 {
			t.Fatalf("batches = %d: the skipped row ended the sweep early or cost a batch", res.batches)
		}
	})
}

func toInt(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case int:
		return int64(x)
	case int32:
		return int64(x)
	}
	return -1
}

func TestTableRowsInsertedDuringASweepPastTheCutoffSurvive(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := newFixture(t, db, passes.TimestampNative)
		for id := 1; id <= 6; id++ {
			f.log(id, cutoffT.Add(-time.Duration(id)*time.Hour), "done")
		}
		p, _ := f.table(f.spec()).Factory()(context.Background())
		if n, err := p.PurgeBatch(context.Background(), 3, cutoffT); n != 3 || err != nil {
			t.Fatalf("first batch = %d, %v", n, err)
		}
		// Written while the sweep runs, after its cutoff (the clock moved on).
		f.log(100, cutoffT.Add(time.Minute), "done")
		f.log(101, cutoffT.Add(time.Millisecond), "done")
		for {
			n, err := p.PurgeBatch(context.Background(), 3, cutoffT)
			if err != nil {
				t.Fatal(err)
			}
			if n < 3 {
				break
			}
		}
		if got := f.ids("audit_log"); !slices.Equal(got, []int64{100, 101}) {
			t.Fatalf("kept %v, want the rows written after the cutoff", got)
		}
	})
}

func TestTableCancelledBatchLeavesNothingHalfDone(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := newFixture(t, db, passes.TimestampNative)
		f.log(1, cutoffT.Add(-time.Hour), "done")
		f.exec("INSERT INTO {p}audit_attachment (id, audit_log_id) VALUES (100, 1)")
		f.exec("INSERT INTO {p}attachment_blob (id, attachment_id) VALUES (1000, 100)")
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		// Cancel the batch right after its first child delete ran inside the transaction.
		hooked := db.WithQueryHook(cancelAfter{match: f.p + "attachment_blob", cancel: cancel})
		tbl, err := passes.NewTable(hooked, "audit-log", f.spec())
		if err != nil {
			t.Fatal(err)
		}
		p, _ := tbl.Factory()(ctx)
		_, err = p.PurgeBatch(ctx, 10, cutoffT)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("PurgeBatch = %v, want the cancellation", err)
		}
		if got := f.ids("attachment_blob"); !slices.Equal(got, []int64{1000}) {
			t.Fatalf("blobs %v: the cancelled transaction left a partial delete", got)
		}
		if got := f.ids("audit_log"); !slices.Equal(got, []int64{1}) {
			t.Fatalf("audit_log %v", got)
		}
	})
}

// cancelAfter cancels a context once a DELETE on a matching table has run.
type cancelAfter struct {
	match  string
	cancel context.CancelFunc
}

func (h cancelAfter) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context { return ctx }
func (h cancelAfter) AfterQuery(_ context.Context, e *bun.QueryEvent) {
	if strings.HasPrefix(e.Query, "DELETE") && strings.Contains(e.Query, h.match) {
		h.cancel()
	}
}

func TestTableDryRunMatchesTheSweep(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := newFixture(t, db, passes.TimestampNative)
		for id := 1; id <= 40; id++ {
			state := []string{"done", "failed", "pending"}[id%3]
			f.log(id, cutoffT.Add(time.Duration(20-id)*time.Minute), state)
		}
		f.exec("INSERT INTO {p}legal_hold (id, audit_log_id) VALUES (1, 22), (2, 25), (3, 2)")
		tbl := f.table(f.spec())
		dry, err := tbl.DryRun(context.Background(), cutoffT)
		if err != nil {
			t.Fatal(err)
		}
		before := len(f.ids("audit_log"))
		res := sweep(t, tbl, 7, cutoffT)
		if int64(res.deleted) != dry.Eligible || int64(before-len(f.ids("audit_log"))) != dry.Eligible {
			t.Fatalf("dry run %+v, sweep deleted %d", dry, res.deleted)
		}
		if dry.Blocked != 2 { // 22 and 25 are expired and done/failed; 2 is not expired
			t.Fatalf("blocked = %d, want 2", dry.Blocked)
		}
		again, _ := tbl.DryRun(context.Background(), cutoffT)
		if again.Eligible != 0 {
			t.Fatalf("after the sweep the dry run still finds %d", again.Eligible)
		}
	})
}

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

func TestTableOldestExpired(t *testing.T) {
	for _, format := range []passes.TimestampFormat{passes.TimestampNative, passes.TimestampUnixMillis} {
		t.Run(string(format), func(t *testing.T) {
			dbtest.Each(t, func(t *testing.T, db *bun.DB) {
				f := newFixture(t, db, format)
				tbl := f.table(f.spec())
				if _, ok, err := tbl.OldestExpired(context.Background(), cutoffT); ok || err != nil {
					t.Fatalf("empty table: %v, %v", ok, err)
				}
				f.log(1, cutoffT.Add(-2*time.Hour), "pending") // filtered out
				f.log(2, cutoffT.Add(-time.Hour), "done")
				f.log(3, cutoffT.Add(-time.Minute), "done")
				at, ok, err := tbl.OldestExpired(context.Background(), cutoffT)
				if err != nil || !ok || !at.Equal(cutoffT.Add(-time.Hour)) {
					t.Fatalf("OldestExpired = %v, %v, %v; want %v", at, ok, err, cutoffT.Add(-time.Hour))
				}
			})
		})
	}
}
