package actors_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/actors/actortest"
	"github.com/retentionkit/retention/passes"
)

// TestRuntimeStopHandsBackTheRunsNoSweepServed triggers a pass for a ledger run while it
// sweeps (the run waits for the follow-up sweep), then stops the runtime before that
// sweep starts. The stopped pass must hand the run back (PassStopped.Unserved), so the
// ledger observer closes it instead of leaving it InProgress: after a cluster's last
// member stops no one recovers it (the multi-process suite once ended with a drain
// helper's run InProgress after every node had stopped with exit 0).
func TestRuntimeStopHandsBackTheRunsNoSweepServed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clk := actortest.NewClock()
	stoppedEvents := make(chan actors.PassStopped, 1)
	firstBatch := make(chan struct{}, 1)
	rt := actors.New(actors.Config{Clock: clk, Logger: quietLogger(), Observers: []actors.Observer{actors.ObserverFunc(func(e actors.Event) error {
		switch e := e.(type) {
		case actors.BatchDone:
			select {
			case firstBatch <- struct{}{}:
			default:
			}
		case actors.PassStopped:
			stoppedEvents <- e
		}
		return nil
	})}})
	opts := passes.DefaultOptions()
	opts.RetentionPeriod, opts.SweepInterval, opts.MaxStartupStagger = passes.Retain(time.Hour), time.Hour, 24*time.Hour
	opts.BatchSize = 10
	opts.BatchDelay = time.Hour // on the manual clock: the sweep waits after its first batch until stopped
	fake := actortest.NewFakePass().Otherwise(actortest.Rows(10))
	if err := rt.Register(passes.Registration{Name: "p", New: fake.Factory(), Options: opts}); err != nil {
		t.Fatal(err)
	}
	if err := rt.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := rt.TriggerRun("p", 41); err != nil {
		t.Fatal(err)
	}
	select {
	case <-firstBatch:
	case <-time.After(time.Minute): // a bound on a hang, not a timing assertion
		t.Fatal("the triggered sweep ran no batch")
	}
	if err := rt.TriggerRun("p", 42); err != nil { // during the sweep: served by a follow-up sweep
		t.Fatal(err)
	}
	stopCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := rt.Stop(stopCtx); err != nil {
		t.Fatal(err)
	}
	select {
	case e := <-stoppedEvents:
		if !slices.Equal(e.Unserved, []int64{42}) {
			t.Fatalf("PassStopped %+v: want run 42 handed back as unserved, so the ledger closes it", e)
		}
	default:
		t.Fatal("Stop returned without the pass's PassStopped")
	}
}
