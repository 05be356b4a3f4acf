// Command primitives shows the building blocks of retention at work on the wall clock:
// a keyed gate that keeps two deletes off one table, a slot pool that bounds the deletes
// running at once, and a poll loop that drains a backlog in batches and then waits.
//
// It is what `make run` starts until the node binary lands; it finishes in about a second.
package main

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/retentionkit/retention/core/polling"
	"github.com/retentionkit/retention/gates"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "primitives:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, out *os.File) error {
	fmt.Fprintln(out, "== admission: 6 batches over 3 tables, at most 2 deletes at once ==")
	if err := admission(ctx, out); err != nil {
		return err
	}
	fmt.Fprintln(out, "\n== poll loop: a backlog of 1,250 rows in batches of 500 ==")
	drain(ctx, out)
	return nil
}

// admission runs six fake batches through gate-then-pool, as the runtime does.
func admission(ctx context.Context, out *os.File) error {
	gate := gates.NewKeyedGate[string]()
	pool := gates.NewSlotPool(2)
	var mu sync.Mutex
	running, peak := 0, 0
	var wg sync.WaitGroup
	errs := make(chan error, 6)
	for i, table := range []string{"audit_log", "sessions", "audit_log", "outbox", "sessions", "audit_log"} {
		wg.Go(func() {
			g, err := gate.Enter(ctx, table)
			if err != nil {
				errs <- err
				return
			}
			defer g.Release()
			s, err := pool.Enter(ctx)
			if err != nil {
				errs <- err
				return
			}
			defer s.Release()
			mu.Lock()
			running++
			peak = max(peak, running)
			fmt.Fprintf(out, "batch %d on %-9s starts (%d running)\n", i, table, running)
			mu.Unlock()
			time.Sleep(50 * time.Millisecond) // the delete
			mu.Lock()
			running--
			mu.Unlock()
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	fmt.Fprintf(out, "peak concurrent deletes: %d (limit 2); keys still tracked: %d; slots free: %d/%d\n",
		peak, gate.TrackedKeys(), pool.Available(), pool.Capacity())
	return nil
}

// drain runs a poll loop over an in-memory backlog: full batches poll again at once, a
// short one waits for the interval, and a stop ends the loop.
func drain(ctx context.Context, out *os.File) {
	backlog, batch := 1250, 500
	stop, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	polling.Loop{
		Interval: 100 * time.Millisecond,
		Reporter: reporter{out},
		Pass: func(context.Context) (polling.Outcome, error) {
			n := min(batch, backlog)
			backlog -= n
			fmt.Fprintf(out, "batch deleted %d rows, %d left\n", n, backlog)
			if n == batch {
				return polling.PollAgain, nil
			}
			return polling.WaitForInterval, nil
		},
	}.Run(stop)
}

type reporter struct{ out *os.File }

func (r reporter) PassFailed(err error) { fmt.Fprintln(r.out, "pass failed:", err) }
func (r reporter) PassCancelled()       { fmt.Fprintln(r.out, "pass cancelled") }
func (r reporter) Stopping()            { fmt.Fprintln(r.out, "loop stopping: only the stop context ends it") }
