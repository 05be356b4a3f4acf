package ledger_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/dbtest"
	"github.com/retentionkit/retention/passes/ledger"
)

// cycle is one cleanup sweep driven batch by batch as the runtime drives it: it goes on
// while a batch came back full (deleted + skipped) or asked for more.
type cycle struct {
	t    *testing.T
	pass passes.Pass
	size int
	at   time.Time
}

func newCycle(t *testing.T, c *ledger.Cleanup, p *ledger.Plan) *cycle {
	t.Helper()
	pass, err := c.Factory()(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return &cycle{t: t, pass: pass, size: p.BatchSize, at: now.Add(-p.Retention)}
}

// batch runs one batch and reports what it deleted and whether the runtime would go on.
func (c *cycle) batch(ctx context.Context) (deleted int, goOn bool, err error) {
	r := &moreReporter{skips: &skips{}}
	n, err := c.pass.PurgeBatch(passes.WithBatchReporter(ctx, r), c.size, c.at)
	return n, n+r.batchSkips == c.size || r.more, err
}

// run runs batches until the runtime would stop, and returns how many ran.
func (c *cycle) run() int {
	c.t.Helper()
	for i := 1; ; i++ {
		_, goOn, err := c.batch(context.Background())
		if err != nil {
			c.t.Errorf("cleanup batch: %v", err)
			return i
		}
		if !goOn {
			return i
		}
		if i > 10000 {
			c.t.Error("the cleanup cycle does not end")
			return i
		}
	}
}

func TestOneNameOnTheDefaultAndWithTheSameOwnValueIsItsOwn(t *testing.T) {
	p := plan(t, ledger.CleanupConfig{Names: []ledger.NameRetention{
		{Name: "a"}, {Name: "a", Retention: retain(ledger.DefaultCleanupRetention)},
	}})
	for _, g := range p.Groups {
		if slices.Contains(g.Names, "a") && g.Default {
			t.Fatalf("a is in the default group %+v: a retention given to it must not move with the override", g)
		}
	}
}

// TestNoneLeftComesFromTheIdsLoaded: another node deletes the rows a batch loaded
// before the batch's delete reaches them (PostgreSQL: the delete waits on the other
// node's row locks, then finds them gone). The batch deleted 0 of a full batch, and the
// cycle must go on.
func TestNoneLeftComesFromTheIdsLoaded(t *testing.T) {
	db := dbtest.Postgres(t)
	b := newBook(t, db)
	for range 30 {
		b.run(ledger.NameWorkQueuePoller, ledger.Completed, time.Hour)
	}
	ctx := context.Background()
	other, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = other.Rollback() }()
	if _, err := other.ExecContext(ctx, "DELETE FROM "+b.p+"metadata WHERE id <= 10"); err != nil {
		t.Fatal(err)
	}
	p := plan(t, ledger.CleanupConfig{DeleteBatchSize: 10})
	c := newCycle(t, ledger.NewCleanup(b.l, p), p)
	type result struct {
		deleted int
		goOn    bool
		err     error
	}
	first := make(chan result, 1)
	go func() {
		n, goOn, err := c.batch(ctx)
		first <- result{n, goOn, err}
	}()
	waitForLockWait(t, db, b.p+"metadata")
	if err := other.Commit(); err != nil {
		t.Fatal(err)
	}
	var r result
	select {
	case r = <-first:
	case <-time.After(time.Minute): // a bound on a hang, not a timing assertion
		t.Fatal("the batch did not return")
	}
	if r.err != nil || r.deleted != 0 || !r.goOn {
		t.Fatalf("first batch: %d deleted, go on %v, %v; want 0 deleted (the other node took them) and the cycle going on", r.deleted, r.goOn, r.err)
	}
	c.run()
	if left := len(b.left()); left != 0 {
		t.Fatalf("%d runs left after the cycle", left)
	}
}

// waitForLockWait waits until a backend's DELETE on table waits for a row lock.
func waitForLockWait(t *testing.T, db *bun.DB, table string) {
	t.Helper()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(time.Minute) // a bound on a hang, not a timing assertion
	for {
		var n int
		err := db.QueryRowContext(context.Background(), `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'DELETE FROM "' || ? || '"%'`, table).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatal("the cleanup's delete never waited on the other transaction")
		}
	}
}
