package ledger_test

import (
	"context"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes/dbtest"
	"github.com/retentionkit/retention/passes/ledger"
)

func migrated(t *testing.T, db *bun.DB) *ledger.Ledger {
	t.Helper()
	p := testPrefix(t, db)
	if _, err := ledger.Migrate(context.Background(), db, p); err != nil {
		t.Fatal(err)
	}
	l, err := ledger.New(db, p)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestRunLifecycle(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		l := migrated(t, db)
		start := time.Date(2026, 3, 1, 12, 0, 0, 123456000, time.UTC)
		id, err := l.StartRun(ctx, "audit-log", start, start.Add(-24*time.Hour), nil)
		if err != nil {
			t.Fatal(err)
		}
		runs, err := l.Runs(ctx, "audit-log", 10)
		if err != nil || len(runs) != 1 || runs[0].State != ledger.InProgress || !runs[0].StartTime.Equal(start) {
			t.Fatalf("runs = %+v, %v", runs, err)
		}
		if err := l.Log(ctx, id, "warning", start.Add(time.Second), "row skipped: violates foreign key", "42"); err != nil {
			t.Fatal(err)
		}
		end := start.Add(time.Minute)
		if err := l.FinishRun(ctx, id, ledger.Finish{End: end, State: ledger.Completed, RowsDeleted: 999, RowsSkipped: 1, Batches: 2, StopReason: "drained"}); err != nil {
			t.Fatal(err)
		}
		// A late second finish (say, a cancellation racing the end) changes nothing.
		if err := l.FinishRun(ctx, id, ledger.Finish{End: end.Add(time.Hour), State: ledger.Cancelled}); err != nil {
			t.Fatal(err)
		}
		runs, _ = l.Runs(ctx, "audit-log", 10)
		r := runs[0]
		if r.State != ledger.Completed || r.RowsDeleted != 999 || r.RowsSkipped != 1 || r.Batches != 2 ||
			r.EndTime == nil || !r.EndTime.Equal(end) || r.StopReason == nil || *r.StopReason != "drained" || r.Error != nil {
			t.Fatalf("finished run = %+v", r)
		}
		logs, err := l.Logs(ctx, id)
		if err != nil || len(logs) != 1 || logs[0].RowKey == nil || *logs[0].RowKey != "42" || logs[0].Level != "warning" {
			t.Fatalf("logs = %+v, %v", logs, err)
		}
	})
}
