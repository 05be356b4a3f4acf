package actors_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/actors/actortest"
	"github.com/retentionkit/retention/core"
	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/dbtest"
	"github.com/retentionkit/retention/passes/ledger"
)

func noStagger(o *passes.Options) { o.MaxStartupStagger = 0 }

func TestPlacedRuntimeStartsNoPassUntilActivated(t *testing.T) {
	actortest.Run(t, actors.Config{Placed: true}, func(t *testing.T, h *actortest.Harness) {
		p, q := actortest.NewFakePass(), actortest.NewFakePass()
		h.Register(
			passes.Registration{Name: "p", New: p.Factory(), Options: options(time.Hour, noStagger)},
			passes.Registration{Name: "q", New: q.Factory(), Options: options(time.Hour, noStagger)},
		)
		h.Start()
		h.Advance(2 * time.Hour)
		if len(p.Calls())+len(q.Calls()) != 0 {
			t.Fatalf("a placed pass swept before it was activated: p %d, q %d calls", len(p.Calls()), len(q.Calls()))
		}
		if s := h.Status("p"); s.State != actors.StateInactive {
			t.Fatalf("state before activation = %s, want inactive", s.State)
		}
		var rule *core.BusinessRuleError
		if err := h.Runtime.Trigger("p"); !errors.As(err, &rule) {
			t.Fatalf("Trigger of an inactive pass = %v, want a business-rule error", err)
		}
		if err := h.Runtime.Activate(context.Background(), "p"); err != nil {
			t.Fatal(err)
		}
		if err := h.Runtime.Activate(context.Background(), "p"); err != nil {
			t.Fatalf("second Activate = %v, want a no-op", err)
		}
		h.Expect(actortest.Of("p", actortest.Is[actors.SweepDone]()))
		if len(q.Calls()) != 0 {
			t.Fatalf("q swept though only p was activated")
		}
		if got := h.Runtime.Active(); !slices.Equal(got, []string{"p"}) {
			t.Fatalf("Active = %v, want [p]", got)
		}
		var nf *core.NotFoundError
		if err := h.Runtime.Activate(context.Background(), "nope"); !errors.As(err, &nf) {
			t.Fatalf("Activate of an unknown pass = %v, want not found", err)
		}
	})
}

func TestDeactivateLetsTheInFlightBatchFinish(t *testing.T) {
	actortest.Run(t, actors.Config{Placed: true}, func(t *testing.T, h *actortest.Harness) {
		fake := actortest.NewFakePass(actortest.Block(500)).Otherwise(actortest.Rows(500))
		h.Register(passes.Registration{Name: "p", New: fake.Factory(), Options: options(time.Hour, noStagger)})
		h.Start()
		if err := h.Runtime.Activate(context.Background(), "p"); err != nil {
			t.Fatal(err)
		}
		h.Settle()
		done := make(chan error, 1)
		go func() { done <- h.Runtime.Deactivate(context.Background(), "p") }()
		h.Settle()
		select {
		case err := <-done:
			t.Fatalf("Deactivate returned (%v) while a batch was in flight", err)
		default:
		}
		fake.Release()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if n := len(fake.Calls()); n != 1 {
			t.Fatalf("calls = %d: a batch started after the deactivation was asked", n)
		}
		h.Settle()
		stopped := actortest.Filter[actors.PassStopped](h.Probe.Events(), actortest.Is[actors.PassStopped]())
		if len(stopped) != 1 || stopped[0].Degraded || stopped[0].Reason == "runtime stopped" {
			t.Fatalf("pass stopped = %+v, want one saying it was deactivated", stopped)
		}
		if s := h.Status("p"); s.State != actors.StateInactive || len(h.Runtime.Active()) != 0 {
			t.Fatalf("after Deactivate: state %s, active %v", s.State, h.Runtime.Active())
		}
		h.Advance(2 * time.Hour)
		if n := len(fake.Calls()); n != 1 {
			t.Fatalf("a deactivated pass swept again: %d calls", n)
		}
		if err := h.Runtime.Activate(context.Background(), "p"); err != nil {
			t.Fatal(err)
		}
		h.Expect(actortest.Where(func(e actors.SweepDone) bool { return e.Name == "p" && e.Reason == actors.BatchLimit }))
	})
}

func TestActivateNeedsAPlacedRuntime(t *testing.T) {
	actortest.Run(t, actors.Config{}, func(t *testing.T, h *actortest.Harness) {
		fake := actortest.NewFakePass()
		h.Register(passes.Registration{Name: "p", New: fake.Factory(), Options: options(time.Hour, noStagger)})
		h.Start()
		var rule *core.BusinessRuleError
		if err := h.Runtime.Deactivate(context.Background(), "p"); !errors.As(err, &rule) {
			t.Fatalf("Deactivate without Placed = %v, want a business-rule error", err)
		}
		if got := h.Runtime.Active(); !slices.Equal(got, []string{"p"}) {
			t.Fatalf("Active without Placed = %v, want every pass", got)
		}
	})
}

func TestActivateForSweepsTheRequestFirst(t *testing.T) {
	actortest.Run(t, actors.Config{Placed: true}, func(t *testing.T, h *actortest.Harness) {
		fake := actortest.NewFakePass(actortest.Rows(10))
		h.Register(passes.Registration{Name: "p#1", New: fake.Factory(), Options: options(time.Hour, func(o *passes.Options) {
			o.MaxStartupStagger = time.Hour // a scheduled first sweep would wait; the request must not
		})})
		h.Start()
		if err := h.Runtime.ActivateFor(context.Background(), "p#1", 42); err != nil {
			t.Fatal(err)
		}
		started := h.Expect(actortest.Is[actors.SweepStarted]()).(actors.SweepStarted)
		if !started.Trigger || !slices.Equal(started.Runs, []int64{42}) || h.Elapsed() != 0 {
			t.Fatalf("first sweep = %+v at +%v, want the requested run at once", started, h.Elapsed())
		}
		h.Expect(actortest.Is[actors.SweepDone]())
		if err := h.Runtime.ActivateFor(context.Background(), "p#1", 43); err != nil {
			t.Fatal(err)
		}
		again := h.Expect(actortest.Is[actors.SweepStarted]()).(actors.SweepStarted)
		if !slices.Equal(again.Runs, []int64{43}) {
			t.Fatalf("ActivateFor of an active pass = %+v, want it triggered for run 43", again)
		}
	})
}

// A request that reaches a pass as it is deactivated (queued behind the sweep in flight)
// is handed back in PassStopped, for the ledger observer to close.
func TestDeactivateHandsBackUnservedRuns(t *testing.T) {
	actortest.Run(t, actors.Config{Placed: true}, func(t *testing.T, h *actortest.Harness) {
		fake := actortest.NewFakePass(actortest.Block(500)).Otherwise(actortest.Rows(0))
		h.Register(passes.Registration{Name: "p", New: fake.Factory(), Options: options(time.Hour, noStagger)})
		h.Start()
		if err := h.Runtime.Activate(context.Background(), "p"); err != nil {
			t.Fatal(err)
		}
		h.Settle()
		if err := h.Runtime.TriggerRun("p", 42); err != nil { // during the sweep: a follow-up
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- h.Runtime.Deactivate(context.Background(), "p") }()
		h.Settle()
		fake.Release()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		h.Settle()
		stopped := actortest.Filter[actors.PassStopped](h.Probe.Events(), actortest.Is[actors.PassStopped]())
		if len(stopped) != 1 || !slices.Equal(stopped[0].Unserved, []int64{42}) {
			t.Fatalf("pass stopped = %+v, want run 42 handed back", stopped)
		}
		for _, s := range actortest.Filter[actors.SweepStarted](h.Probe.Events(), actortest.Is[actors.SweepStarted]()) {
			if slices.Contains(s.Runs, 42) {
				t.Fatalf("run 42 was served by sweep %d, yet handed back", s.Sweep)
			}
		}
	})
}

// The ledger observer closes the runs a deactivated pass hands back: cancelled, with the
// reason, and off the work queue.
func TestLedgerClosesUnservedRuns(t *testing.T) {
	db := dbtest.SQLite(t)
	if _, err := ledger.Migrate(context.Background(), db, "u_"); err != nil {
		t.Fatal(err)
	}
	l, _ := ledger.New(db, "u_")
	ctx := context.Background()
	c, err := l.RequestSweep(ctx, "p", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.ForNode("n1").ClaimWork(ctx, []string{"p"}, 10, time.Now()); err != nil {
		t.Fatal(err)
	}
	obs := &actors.LedgerObserver{Ledger: l}
	if err := obs.Observe(actors.PassStopped{Name: "p", Reason: "deactivated: placed elsewhere", Unserved: []int64{c.RunID}}); err != nil {
		t.Fatal(err)
	}
	runs, err := l.Runs(ctx, "p", 10)
	if err != nil || len(runs) != 1 || runs[0].State != ledger.Cancelled || runs[0].Error == nil {
		t.Fatalf("runs = %+v, %v; want the request cancelled with its reason", runs, err)
	}
	if made, err := l.RequestSweepUnlessQueued(ctx, "p", time.Now()); err != nil || !made {
		t.Fatalf("a new request after the close = %v, %v", made, err)
	}
}
