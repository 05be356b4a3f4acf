package passtest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/ledger"
)

// ledgerNow is the instant the ledger behaviours take as now.
var ledgerNow = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

// ledgerPrefix is the ledger's table prefix; each behaviour has a database of its own.
const ledgerPrefix = "rk_"

// ledgerBehaviours: a run is started, logged and finished once; the dead-letter cleanup
// prunes only letters resolved before the cutoff, freeing their failed run.
func ledgerBehaviours() []behaviour {
	return []behaviour{
		{name: "run lifecycle", run: runLifecycle},
		{name: "dead letters prune only old resolved letters", run: deadLetterPrune},
		{name: "work queue requests a sweep unless one is queued", run: requestUnlessQueued},
	}
}

// migratedLedger migrates the ledger into db and opens it.
func migratedLedger(t *testing.T, db *DB) *ledger.Ledger {
	t.Helper()
	if _, err := ledger.Migrate(context.Background(), db.DB, ledgerPrefix); err != nil {
		t.Fatal(err)
	}
	l, err := ledger.New(db.DB, ledgerPrefix)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func runLifecycle(t *testing.T, db *DB) {
	ctx := context.Background()
	l := migratedLedger(t, db)
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
	// A late second finish (a cancellation racing the end, say) changes nothing.
	if err := l.FinishRun(ctx, id, ledger.Finish{End: end.Add(time.Hour), State: ledger.Cancelled}); err != nil {
		t.Fatal(err)
	}
	runs, err = l.Runs(ctx, "audit-log", 10)
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs = %+v, %v", runs, err)
	}
	r := runs[0]
	if r.State != ledger.Completed || r.RowsDeleted != 999 || r.RowsSkipped != 1 || r.Batches != 2 ||
		r.EndTime == nil || !r.EndTime.Equal(end) || r.StopReason == nil || *r.StopReason != "drained" || r.Error != nil {
		t.Fatalf("finished run = %+v", r)
	}
	logs, err := l.Logs(ctx, id)
	if err != nil || len(logs) != 1 || logs[0].RowKey == nil || *logs[0].RowKey != "42" || logs[0].Level != "warning" {
		t.Fatalf("logs = %+v, %v", logs, err)
	}
}

func deadLetterPrune(t *testing.T, db *DB) {
	ctx := context.Background()
	l := migratedLedger(t, db)
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	const failed = 1
	exec("INSERT INTO rk_metadata (id, name, state, start_time) VALUES (?, ?, ?, ?)", failed, "orders", ledger.Failed, ledgerNow.Add(-30*24*time.Hour))
	oldResolved := addDeadLetter(t, l, failed, ledgerNow.Add(-20*24*time.Hour))
	recentResolved := addDeadLetter(t, l, 0, ledgerNow.Add(-20*24*time.Hour))
	open := addDeadLetter(t, l, 0, ledgerNow.Add(-60*24*time.Hour))
	exec("UPDATE rk_dead_letter SET resolved_time = ? WHERE id = ?", ledgerNow.Add(-10*24*time.Hour), oldResolved)
	exec("UPDATE rk_dead_letter SET resolved_time = ? WHERE id = ?", ledgerNow.Add(-time.Hour), recentResolved)

	p, err := ledger.NewDeadLetterCleanup(l, 0, 0).Registration().New(ctx)
	if err != nil {
		t.Fatal(err)
	}
	n, err := p.PurgeBatch(ctx, 100, ledgerNow.Add(-ledger.DefaultDeadLetterRetention))
	if err != nil || n != 1 {
		t.Fatalf("PurgeBatch = %d, %v; want the one resolved 10 days ago", n, err)
	}
	letters, err := l.DeadLetters(ctx)
	if err != nil || len(letters) != 2 || letters[0].ID != open || letters[1].ID != recentResolved {
		t.Fatalf("letters left = %+v, %v", letters, err)
	}
	// Its failed run is no longer evidence: the metadata cleanup may take it now.
	metadataCleanup(t, l, ledger.CleanupConfig{Names: []ledger.NameRetention{{Name: "orders"}}})
	var left []int64
	if err := db.NewSelect().TableExpr("rk_metadata").Column("id").Scan(ctx, &left); err != nil {
		t.Fatal(err)
	}
	if slices.Contains(left, failed) {
		t.Fatal("the failed run of a pruned dead letter was kept")
	}
}

func addDeadLetter(t *testing.T, l *ledger.Ledger, run int64, at time.Time) int64 {
	t.Helper()
	id, err := l.AddDeadLetter(context.Background(), "orders", "boom", run, at)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// metadataCleanup runs one metadata cleanup sweep at ledgerNow as the runtime does.
func metadataCleanup(t *testing.T, l *ledger.Ledger, c ledger.CleanupConfig) {
	t.Helper()
	plan, err := c.Build()
	if err != nil {
		t.Fatal(err)
	}
	p, err := ledger.NewCleanup(l, plan).Factory()(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		r := &sweepReporter{}
		n, err := p.PurgeBatch(passes.WithBatchReporter(context.Background(), r), plan.BatchSize, ledgerNow.Add(-plan.Retention))
		if err != nil {
			t.Fatalf("cleanup batch: %v", err)
		}
		if n+len(r.skipped) < plan.BatchSize && !r.more {
			return
		}
		if i > 1000 {
			t.Fatal("the cleanup does not end")
		}
	}
}

// requestUnlessQueued: a sweep request is queued once per pass until a node claims it.
func requestUnlessQueued(t *testing.T, db *DB) {
	ctx := context.Background()
	l := migratedLedger(t, db)
	for i, want := range []bool{true, false, false} {
		made, err := l.RequestSweepUnlessQueued(ctx, "events#1", ledgerNow)
		if err != nil || made != want {
			t.Fatalf("request %d = %v, %v; want %v", i, made, err, want)
		}
	}
	claims, err := l.ForNode("n1").ClaimWork(ctx, []string{"events#1"}, 10, ledgerNow)
	if err != nil || len(claims) != 1 {
		t.Fatalf("claims = %+v, %v; want the one request", claims, err)
	}
	if made, err := l.RequestSweepUnlessQueued(ctx, "events#1", ledgerNow); err != nil || !made {
		t.Fatalf("request after the claim = %v, %v; want a new one queued", made, err)
	}
	if made, err := l.RequestSweepUnlessQueued(ctx, "events#2", ledgerNow); err != nil || !made {
		t.Fatalf("another pass's request = %v, %v; want it queued", made, err)
	}
}
