package ledger_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes/ledger"
)

// FindRuns filters by name, state and start time, newest first, and pages by id without
// repeating or losing a run.
func TestFindRunsFiltersAndPages(t *testing.T) {
	eachDB(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		l := migrated(t, db)
		base := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
		var ids []int64
		for i := range 10 {
			name := "a"
			if i%2 == 1 {
				name = "b"
			}
			id, err := l.StartRun(ctx, name, base.Add(time.Duration(i)*time.Hour), base, nil)
			if err != nil {
				t.Fatal(err)
			}
			if i < 6 {
				if err := l.FinishRun(ctx, id, ledger.Finish{End: base.Add(time.Duration(i)*time.Hour + time.Minute), State: ledger.Completed, RowsDeleted: int64(i)}); err != nil {
					t.Fatal(err)
				}
			}
			ids = append(ids, id)
		}
		idsOf := func(runs []ledger.Run) string {
			var s []string
			for _, r := range runs {
				s = append(s, fmt.Sprint(r.RowsDeleted, r.Name))
			}
			return strings.Join(s, " ")
		}
		cases := []struct {
			name string
			f    ledger.RunFilter
			want string
		}{
			{"all", ledger.RunFilter{}, "0b 0a 0b 0a 5b 4a 3b 2a 1b 0a"},
			{"by name", ledger.RunFilter{Name: "a"}, "0a 0a 4a 2a 0a"},
			{"by state", ledger.RunFilter{State: ledger.InProgress}, "0b 0a 0b 0a"},
			{"by time", ledger.RunFilter{Since: base.Add(2 * time.Hour), Until: base.Add(5 * time.Hour)}, "4a 3b 2a"},
			{"a page", ledger.RunFilter{Limit: 3}, "0b 0a 0b"},
			{"the next page", ledger.RunFilter{Limit: 3, BeforeID: ids[7]}, "0a 5b 4a"},
			{"everything at once", ledger.RunFilter{Name: "b", State: ledger.Completed, Since: base.Add(2 * time.Hour)}, "5b 3b"},
		}
		for _, c := range cases {
			runs, err := l.FindRuns(ctx, c.f)
			if err != nil || idsOf(runs) != c.want {
				t.Errorf("%s: %q, %v; want %q", c.name, idsOf(runs), err, c.want)
			}
		}
		hist, err := l.SweepHistory(ctx, "a", 2)
		if err != nil || idsOf(hist) != "2a 4a" {
			t.Errorf("sweep history = %q, %v; want the last two finished runs of a, oldest first", idsOf(hist), err)
		}
		last, err := l.LastRuns(ctx)
		if err != nil || len(last) != 2 || last["a"].RowsDeleted != 4 || last["b"].RowsDeleted != 5 {
			t.Errorf("last runs = %+v, %v; want a's run 4 and b's run 5, the latest finished", last, err)
		}
		if err := l.Log(ctx, ids[0], "info", base, "first", ""); err != nil {
			t.Fatal(err)
		}
		if err := l.Log(ctx, ids[0], "warning", base, "second", "42"); err != nil {
			t.Fatal(err)
		}
		logs, err := l.LogsOf(ctx, []int64{ids[0], ids[1]})
		if err != nil || len(logs[ids[0]]) != 2 || logs[ids[0]][1].Message != "second" || len(logs[ids[1]]) != 0 {
			t.Errorf("logs = %+v, %v", logs, err)
		}
		names, err := l.RunNames(ctx)
		if err != nil || strings.Join(names, ",") != "a,b" {
			t.Errorf("names = %v, %v", names, err)
		}
	})
}

// An action is a finished run under NameAdminActions with a log row naming what, to
// what and from where; a failed one is a Failed run with its error.
func TestRecordAction(t *testing.T) {
	eachDB(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		l := migrated(t, db)
		at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
		ok, err := l.RecordAction(ctx, ledger.Action{Kind: "trigger", Target: "audit-log", Detail: "sweep queued", From: "127.0.0.1:5000", At: at})
		if err != nil {
			t.Fatal(err)
		}
		bad, err := l.RecordAction(ctx, ledger.Action{Kind: "retry", Target: "dead letter 9", Err: errors.New("no such dead letter"), From: "10.0.0.1:1", At: at})
		if err != nil {
			t.Fatal(err)
		}
		runs, err := l.FindRuns(ctx, ledger.RunFilter{Name: ledger.NameAdminActions})
		if err != nil || len(runs) != 2 || runs[0].ID != bad || runs[0].State != ledger.Failed || runs[1].State != ledger.Completed || *runs[1].StopReason != "trigger" {
			t.Fatalf("runs = %+v, %v", runs, err)
		}
		logs, err := l.LogsOf(ctx, []int64{ok, bad})
		if err != nil {
			t.Fatal(err)
		}
		if got := logs[ok][0].Message; got != "trigger audit-log: sweep queued (from 127.0.0.1:5000)" {
			t.Errorf("log = %q", got)
		}
		if got := logs[bad][0]; got.Level != "warning" || !strings.Contains(got.Message, "no such dead letter") {
			t.Errorf("log = %+v", got)
		}
	})
}

// Backlog samples come back per pass, oldest first; samples past the retention go when
// the next are recorded.
func TestBacklogHistory(t *testing.T) {
	eachDB(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		l := migrated(t, db)
		at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
		for i, when := range []time.Time{at.Add(-ledger.BacklogSampleRetention - time.Hour), at.Add(-time.Hour), at} {
			err := l.RecordBacklog(ctx, when, map[string]ledger.BacklogSample{"a": {Rows: int64(i), Held: 1}, "b": {Rows: 100}})
			if err != nil {
				t.Fatal(err)
			}
		}
		got, err := l.BacklogHistory(ctx, "a", time.Time{})
		if err != nil || len(got) != 2 || got[0].Rows != 1 || got[1].Rows != 2 || !got[1].At.Equal(at) || got[1].Held != 1 {
			t.Fatalf("history = %+v, %v; want the two recent samples of a", got, err)
		}
		if got, _ := l.BacklogHistory(ctx, "a", at.Add(-time.Minute)); len(got) != 1 {
			t.Errorf("since a minute ago: %+v", got)
		}
	})
}

// The settings read says whether an override is stored and when it changed.
func TestCleanupRetentionSetting(t *testing.T) {
	eachDB(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		l := migrated(t, db)
		if _, _, ok, err := l.CleanupRetentionSetting(ctx); ok || err != nil {
			t.Fatalf("before any: ok %v, %v", ok, err)
		}
		at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
		if err := l.SetCleanupRetention(ctx, 2*time.Hour, at); err != nil {
			t.Fatal(err)
		}
		d, updated, ok, err := l.CleanupRetentionSetting(ctx)
		if !ok || err != nil || d != 2*time.Hour || !updated.Equal(at) {
			t.Errorf("= %v %v %v %v", d, updated, ok, err)
		}
	})
}
