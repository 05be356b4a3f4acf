package actortest_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/actors/actortest"
	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/passtest"
)

// A manual clock fires timers only when advanced, in due order, on the advancing
// goroutine: nothing happens by itself.
func ExampleNewClock() {
	clk := actortest.NewClock()
	clk.AfterFunc(2*time.Minute, func() { fmt.Println("second timer at", clk.Now().Format(time.TimeOnly)) })
	clk.AfterFunc(time.Minute, func() { fmt.Println("first timer at", clk.Now().Format(time.TimeOnly)) })
	fmt.Println("pending:", clk.Pending())
	clk.Advance(time.Hour)
	fmt.Println("now:", clk.Now().Format(time.DateTime))
	// Output:
	// pending: 2
	// first timer at 00:01:00
	// second timer at 00:02:00
	// now: 2026-01-01 01:00:00
}

// A fake pass plays its script one PurgeBatch at a time, then its fallback, and
// records every call with the pass value it went to.
func ExampleFakePass() {
	boom := errors.New("deadlock detected")
	fake := actortest.NewFakePass(actortest.Rows(500), actortest.Fail(boom)).Otherwise(actortest.Rows(0))
	ctx, cutoff := context.Background(), actortest.Epoch.Add(-time.Hour)
	for range 2 { // two sweeps: the factory builds a fresh pass value for each
		p, _ := fake.Factory()(ctx)
		n, err := p.PurgeBatch(ctx, 500, cutoff)
		fmt.Println(n, err)
	}
	p, _ := fake.Factory()(ctx)
	n, err := p.PurgeBatch(ctx, 500, cutoff)
	fmt.Println(n, err)
	for _, c := range fake.Calls() {
		fmt.Printf("pass value %d: batch of %d older than %s\n", c.Instance, c.BatchSize, c.OlderThan.Format(time.DateTime))
	}
	// Output:
	// 500 <nil>
	// 0 deadlock detected
	// 0 <nil>
	// pass value 1: batch of 500 older than 2025-12-31 23:00:00
	// pass value 2: batch of 500 older than 2025-12-31 23:00:00
	// pass value 3: batch of 500 older than 2025-12-31 23:00:00
}

// A probe is an observer that keeps every event; matchers pick the ones a test cares
// about.
func ExampleProbe() {
	probe := &actortest.Probe{}
	for _, e := range []actors.Event{
		actors.SweepStarted{Name: "audit"},
		actors.SweepDone{Name: "audit", Rows: 520, Reason: actors.Drained},
		actors.SweepDone{Name: "sessions", Rows: 0, Reason: actors.Drained},
	} {
		_ = probe.Observe(e) // the runtime calls this for every event
	}
	busy := actortest.Where(func(d actors.SweepDone) bool { return d.Rows > 0 })
	for _, d := range actortest.Filter[actors.SweepDone](probe.Events(), actortest.Of("audit", busy)) {
		fmt.Println(d.Name, d.Rows, d.Reason)
	}
	fmt.Println(len(actortest.Filter[actors.SweepDone](probe.Events(), actortest.Is[actors.SweepDone]())), "sweeps done")
	// Output:
	// audit 520 drained
	// 2 sweeps done
}

// SweepOnce runs a table pass on a real runtime over a real database. The clock stands
// at Epoch, so the sweep's cutoff is exactly SweepCutoff(opts), and a fixture seeded
// around it can be asserted on key by key.
func ExampleSweepOnce() {
	t := newExampleT() // in a test, the test's *testing.T
	defer t.Close()

	opts := passes.DefaultOptions()
	opts.RetentionPeriod = passes.Retain(30 * 24 * time.Hour)
	opts.BatchSize = 4

	db := passtest.SQLite(t)
	tbl := passtest.Seed(t, db, passtest.Fixture{Table: "audit_log", Cutoff: actortest.SweepCutoff(opts), Expired: 10, Fresh: 3})
	pass, err := passes.NewTable(db.DB, "audit-log", tbl.Spec())
	if err != nil {
		fmt.Println(err)
		return
	}
	done, _ := actortest.SweepOnce(t, actors.Config{}, pass.Registration(opts))
	fmt.Println(done.Rows, "rows in", done.Batches, "batches,", done.Reason, "at", done.Cutoff.Format(time.DateOnly))

	tbl.RequireSwept(t)                // every expired row gone, every fresh one kept
	tbl.RequireKept(t, tbl.Expired[0]) // fails, and names the key
	// Output:
	// 10 rows in 3 batches, drained at 2025-12-02
	// FAIL: audit_log: 1 of 1 rows that should be kept are gone: keys 1
}
