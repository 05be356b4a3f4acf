package ledger_test

import (
	"context"
	"slices"
	"strings"
	"sync"
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

// eligibleLeft counts the terminal runs of name older than age.
func (b *book) eligibleLeft(name string, age time.Duration) int {
	b.t.Helper()
	n, err := b.db.NewSelect().TableExpr(b.p+"metadata").Where("name = ?", name).
		Where("state IN (?)", bun.List([]ledger.State{ledger.Completed, ledger.Failed, ledger.Cancelled})).
		Where("start_time < ?", now.Add(-age)).Count(context.Background())
	if err != nil {
		b.t.Fatal(err)
	}
	return int(n)
}

// TestAnOwnRetentionEqualToTheDefaultStaysPut: a name given its own retention stays
// where it was when the default is overridden, even when that retention equals the
// default; a name on the default moves with the override.
func TestAnOwnRetentionEqualToTheDefaultStaysPut(t *testing.T) {
	eachDB(t, func(t *testing.T, db *bun.DB) {
		b := newBook(t, db)
		onDefault := b.run("nightly-import", ledger.Completed, 45*time.Minute)
		own := b.run("customer-patch", ledger.Completed, 45*time.Minute)
		p := plan(t, ledger.CleanupConfig{Names: []ledger.NameRetention{
			{Name: "nightly-import"},
			{Name: "customer-patch", Retention: retain(ledger.DefaultCleanupRetention)},
		}})
		if err := b.l.SetCleanupRetention(context.Background(), time.Hour, now); err != nil {
			t.Fatal(err)
		}
		b.sweep(p)
		if got, want := b.left(), []int64{onDefault}; !slices.Equal(got, want) {
			t.Fatalf("left %v, want %v: the 1h override keeps the default's 45m-old run, and customer-patch keeps its own 30m (run %d goes)", got, want, own)
		}
	})
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

// TestGroupsTakeTurns: the default group has many eligible runs, a second group a few;
// the second group's runs go in the cycle's second batch, not after the first group.
func TestGroupsTakeTurns(t *testing.T) {
	eachDB(t, func(t *testing.T, db *bun.DB) {
		b := newBook(t, db)
		for range 40 {
			b.run(ledger.NameWorkQueuePoller, ledger.Completed, time.Hour)
		}
		for range 3 {
			b.run("customer-patch", ledger.Completed, 3*time.Hour)
		}
		p := plan(t, ledger.CleanupConfig{DeleteBatchSize: 5, Names: []ledger.NameRetention{{Name: "customer-patch", Retention: retain(2 * time.Hour)}}})
		c := newCycle(t, ledger.NewCleanup(b.l, p), p)
		for range 2 {
			if _, goOn, err := c.batch(context.Background()); err != nil || !goOn {
				t.Fatalf("batch: go on %v, %v", goOn, err)
			}
		}
		if left := b.eligibleLeft("customer-patch", 2*time.Hour); left != 0 {
			t.Fatalf("after two batches %d customer-patch runs are left: the default group took every turn", left)
		}
		if batches := c.run(); b.eligibleLeft(ledger.NameWorkQueuePoller, 30*time.Minute) != 0 {
			t.Fatalf("the cycle ended after %d more batches with runs left", batches)
		}
	})
}

// TestACycleEndsOnlyWhenNothingIsLeft: with more eligible runs than the pass defaults'
// 100 batches can take, one cycle still deletes them all, in every group.
func TestACycleEndsOnlyWhenNothingIsLeft(t *testing.T) {
	eachDB(t, func(t *testing.T, db *bun.DB) {
		b := newBook(t, db)
		for i := range 130 {
			b.run(ledger.NameWorkQueuePoller, ledger.Completed, time.Hour)
			if i%10 == 0 {
				b.run("customer-patch", ledger.Failed, 3*time.Hour)
			}
		}
		p := plan(t, ledger.CleanupConfig{DeleteBatchSize: 1, Names: []ledger.NameRetention{{Name: "customer-patch", Retention: retain(2 * time.Hour)}}})
		reg := ledger.NewCleanup(b.l, p).Registration()
		if reg.Options.MaxBatchesPerSweep <= 143 {
			t.Fatalf("the cleanup's sweep stops after %d batches", reg.Options.MaxBatchesPerSweep)
		}
		newCycle(t, ledger.NewCleanup(b.l, p), p).run()
		if left := len(b.left()); left != 0 {
			t.Fatalf("%d runs left after one cycle", left)
		}
	})
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

// TestTwoCleanupsEachEndWithNothingLeft runs two cycles at once: whichever ends first,
// nothing eligible is left when it does.
func TestTwoCleanupsEachEndWithNothingLeft(t *testing.T) {
	eachDB(t, func(t *testing.T, db *bun.DB) {
		b := newBook(t, db)
		for i := range 600 {
			state := []ledger.State{ledger.Completed, ledger.Failed, ledger.InProgress}[i%3]
			b.run(ledger.NameWorkQueuePoller, state, time.Hour)
		}
		p := plan(t, ledger.CleanupConfig{DeleteBatchSize: 10})
		var wg sync.WaitGroup
		left := make(chan int, 2)
		for range 2 {
			c := newCycle(t, ledger.NewCleanup(b.l, p), p)
			wg.Go(func() {
				c.run()
				left <- b.eligibleLeft(ledger.NameWorkQueuePoller, 30*time.Minute)
			})
		}
		wg.Wait()
		close(left)
		for n := range left {
			if n != 0 {
				t.Fatalf("a cycle ended with %d eligible runs left", n)
			}
		}
	})
}

// TestTheSweepMergesAliasesWhenTheStartupCheckWasBypassed: a pass listed under its short
// name (1h) and its full name (24h), never checked at startup: the sweep keeps the
// longer retention under both names and warns once.
func TestTheSweepMergesAliasesWhenTheStartupCheckWasBypassed(t *testing.T) {
	eachDB(t, func(t *testing.T, db *bun.DB) {
		b := newBook(t, db)
		full := "github.com/acme/jobs.PatchPass"
		short := b.run("PatchPass", ledger.Completed, 2*time.Hour)
		long := b.run(full, ledger.Completed, 2*time.Hour)
		gone := b.run(full, ledger.Completed, 25*time.Hour)
		p := plan(t, ledger.CleanupConfig{Names: []ledger.NameRetention{
			{Name: "PatchPass", Retention: retain(time.Hour)}, {Name: full, Retention: retain(24 * time.Hour)},
		}})
		for _, aliases := range []map[string]string{nil, ledger.AliasesFor([]string{full})} {
			var warnings []string
			c := ledger.NewCleanup(b.l, p).WithWarnings(func(w string) { warnings = append(warnings, w) })
			if aliases != nil {
				c = c.WithAliases(aliases)
			}
			newCycle(t, c, p).run()
			newCycle(t, c, p).run()
			if got, want := b.left(), []int64{short, long}; !slices.Equal(got, want) {
				t.Fatalf("aliases %v: left %v, want %v (only %d is older than the longer 24h)", aliases, got, want, gone)
			}
			if len(warnings) != 1 || !strings.Contains(warnings[0], "PatchPass") || !strings.Contains(warnings[0], "24h") {
				t.Fatalf("aliases %v: warnings %q, want one naming the pass and the retention kept", aliases, warnings)
			}
		}
	})
}
