package actors_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/actors/actortest"
	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/dbtest"
	"github.com/retentionkit/retention/passes/ledger"
	"github.com/retentionkit/retention/supervisor"
)

func migratedLedger(t *testing.T, db *bun.DB) *ledger.Ledger {
	t.Helper()
	p := fmt.Sprintf("l%08x_", rand.Uint32())
	t.Cleanup(func() {
		for _, table := range []string{"settings", "dead_letter", "work_queue", "log", "metadata", "node", "quarantine", "backlog_sample", "partition_retirements", "migrations", "migration_locks"} {
			_, _ = db.ExecContext(context.Background(), "DROP TABLE IF EXISTS "+p+table)
		}
	})
	if _, err := ledger.Migrate(context.Background(), db, p); err != nil {
		t.Fatal(err)
	}
	l, _ := ledger.New(db, p)
	return l
}

// node is one runtime with the ledger observer and a channel of its sweeps.
type node struct {
	rt   *actors.Runtime
	done chan actors.SweepDone
}

func startNode(t *testing.T, l *ledger.Ledger, cfg actors.Config, regs ...passes.Registration) *node {
	t.Helper()
	n := &node{done: make(chan actors.SweepDone, 16)}
	cfg.Logger = quietLogger()
	// The ledger observer first: an observer of the test's hears an event after the ledger
	// has recorded it.
	cfg.Observers = append([]actors.Observer{&actors.LedgerObserver{Ledger: l}}, cfg.Observers...)
	cfg.Observers = append(cfg.Observers, actors.ObserverFunc(func(e actors.Event) error {
		if d, ok := e.(actors.SweepDone); ok {
			n.done <- d
		}
		return nil
	}))
	n.rt = actors.New(cfg)
	if err := n.rt.Register(regs...); err != nil {
		t.Fatal(err)
	}
	if err := n.rt.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = n.rt.Stop(context.Background()) })
	return n
}

// neverByItself is a pass that sweeps only when asked (its node's clock never moves).
func neverByItself(calls *atomic.Int32) passes.Registration {
	opts := passes.DefaultOptions()
	opts.RetentionPeriod, opts.SweepInterval, opts.MaxStartupStagger = passes.Retain(24*time.Hour), 24*time.Hour, 24*time.Hour
	return passes.Registration{Name: "audit-log", Options: opts, New: passes.Reuse(passes.PassFunc(func(context.Context, int, time.Time) (int, error) {
		calls.Add(1)
		return 0, nil
	}))}
}

func TestATriggerToTwoRuntimesRunsOnce(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		l := migratedLedger(t, db)
		var calls atomic.Int32
		a := startNode(t, l, actors.Config{Clock: actortest.NewClock()}, neverByItself(&calls)) // a clock that never moves: no sweep by itself
		b := startNode(t, l, actors.Config{Clock: actortest.NewClock()}, neverByItself(&calls))
		req, err := l.RequestSweep(context.Background(), "audit-log", time.Now())
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var claimed atomic.Int32
		for _, n := range []*node{a, b} {
			wg.Go(func() {
				got, err := (&actors.WorkQueuePoller{Runtime: n.rt, Ledger: l}).PollOnce(context.Background())
				if err != nil {
					t.Error(err)
				}
				claimed.Add(int32(got))
			})
		}
		wg.Wait()
		if claimed.Load() != 1 {
			t.Fatalf("claimed %d times, want once", claimed.Load())
		}
		select {
		case <-a.done:
		case <-b.done:
		case <-time.After(time.Minute): // a bound on a hang, not a timing assertion
			t.Fatal("the requested sweep did not run")
		}
		if calls.Load() != 1 {
			t.Fatalf("the pass ran %d batches, want 1", calls.Load())
		}
		runs, _ := l.Runs(context.Background(), "audit-log", 5)
		if len(runs) != 1 || runs[0].ID != req.RunID || runs[0].State != ledger.Completed {
			t.Fatalf("runs = %+v, want the requested run %d completed", runs, req.RunID)
		}
		if claims, _ := l.ClaimWork(context.Background(), []string{"audit-log"}, 10, time.Now()); len(claims) != 0 {
			t.Fatalf("the request is still claimable: %+v", claims)
		}
	})
}

func TestADeadLetterAndItsRetryAreLinked(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		l := migratedLedger(t, db)
		opts := passes.DefaultOptions()
		opts.RetentionPeriod, opts.MaxStartupStagger = passes.Retain(time.Hour), 0
		boom := errors.New("relation orders does not exist")
		var calls atomic.Int32
		stopped := make(chan struct{})
		cfg := actors.Config{
			Supervision: supervisor.Policy{Backoff: supervisor.Backoff{Initial: time.Millisecond, Max: time.Millisecond}, Limit: supervisor.Limit{MaxRestarts: 1, Window: time.Hour}},
			Observers: []actors.Observer{actors.ObserverFunc(func(e actors.Event) error {
				if s, ok := e.(actors.PassStopped); ok && s.Degraded {
					close(stopped)
				}
				return nil
			})},
		}
		n := startNode(t, l, cfg, passes.Registration{Name: "orders", Options: opts, New: passes.Reuse(passes.PassFunc(func(context.Context, int, time.Time) (int, error) {
			if calls.Add(1) <= 2 { // the first try and its one restart fail; the retry works
				return 0, boom
			}
			return 0, nil
		}))})
		select {
		case <-stopped:
		case <-time.After(time.Minute): // a bound on a hang, not a timing assertion
			t.Fatal("supervision did not give up")
		}
		letters, _ := l.DeadLetters(context.Background())
		if len(letters) != 1 || letters[0].PassName != "orders" || letters[0].MetadataID == nil {
			t.Fatalf("dead letters = %+v", letters)
		}
		runs, _ := l.Runs(context.Background(), "orders", 10)
		if runs[0].ID != *letters[0].MetadataID || runs[0].State != ledger.Failed {
			t.Fatalf("the dead letter points at run %d; latest run %+v", *letters[0].MetadataID, runs[0])
		}
		retry, err := l.RetryDeadLetter(context.Background(), letters[0].ID, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if claimed, err := (&actors.WorkQueuePoller{Runtime: n.rt, Ledger: l}).PollOnce(context.Background()); err != nil || claimed != 1 {
			t.Fatalf("PollOnce = %d, %v", claimed, err)
		}
		select {
		case d := <-n.done:
			for d.Reason == actors.Failed { // the failures before the dead letter
				d = <-n.done
			}
			if d.Reason != actors.Drained {
				t.Fatalf("the retried sweep ended %s", d.Reason)
			}
		case <-time.After(time.Minute):
			t.Fatal("the retried sweep did not run")
		}
		_ = n.rt.Stop(context.Background()) // flushes the observers
		letters, _ = l.DeadLetters(context.Background())
		if letters[0].RetryMetadataID == nil || *letters[0].RetryMetadataID != retry.RunID || letters[0].ResolvedTime == nil {
			t.Fatalf("dead letter after retry = %+v, want linked to run %d", letters[0], retry.RunID)
		}
		runs, _ = l.Runs(context.Background(), "orders", 10)
		var retried *ledger.Run
		for i := range runs {
			if runs[i].ID == retry.RunID {
				retried = &runs[i]
			}
		}
		if retried == nil || retried.State != ledger.Completed {
			t.Fatalf("the retry run = %+v, want completed", retried)
		}
		if _, err := l.RetryDeadLetter(context.Background(), letters[0].ID, time.Now()); err == nil {
			t.Fatal("a dead letter was retried twice")
		}
		if _, err := l.RetryDeadLetter(context.Background(), 9999, time.Now()); err == nil {
			t.Fatal("an unknown dead letter was retried")
		}
	})
}

// TestInternalLoopsRecordTheirRuns runs the metadata cleanup, the dead-letter cleanup
// and the run recovery as passes and the work-queue poller once, on an empty ledger:
// none of them found anything to do, so none recorded a run under its internal name (a
// loop that did work records one: TestRoutineLoopsLogAndRecordOnlyWork).
func TestInternalLoopsRecordTheirRuns(t *testing.T) {
	db := dbtest.SQLite(t)
	l := migratedLedger(t, db)
	plan, err := ledger.CleanupConfig{}.Build()
	if err != nil {
		t.Fatal(err)
	}
	n := startNode(t, l, actors.Config{}, ledger.NewCleanup(l, plan).Registration(), ledger.NewDeadLetterCleanup(l, 0, 0).Registration(),
		ledger.NewRunRecovery(l, 0, 0).Registration())
	for range 3 {
		select {
		case <-n.done:
		case <-time.After(time.Minute): // a bound on a hang, not a timing assertion
			t.Fatal("the cleanups did not sweep")
		}
	}
	if _, err := (&actors.WorkQueuePoller{Runtime: n.rt, Ledger: l}).PollOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, name := range ledger.InternalNames() {
		runs, err := l.Runs(context.Background(), name, 5)
		if err != nil || len(runs) != 0 {
			t.Errorf("runs of %s, which found nothing = %+v, %v; want none", name, runs, err)
		}
	}
}
