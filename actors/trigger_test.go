package actors_test

import (
	"errors"
	"testing"
	"time"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/actors/actortest"
	"github.com/retentionkit/retention/core"
	"github.com/retentionkit/retention/passes"
)

func TestTriggerWhileIdleSweepsAtOnce(t *testing.T) {
	t.Parallel()
	actortest.Run(t, actors.Config{}, func(t *testing.T, h *actortest.Harness) {
		fake := actortest.NewFakePass()
		h.Register(passes.Registration{Name: "p", New: fake.Factory(), Options: options(time.Hour)})
		h.Start()
		h.ExpectWithin(2*time.Minute, actortest.Is[actors.SweepDone]())
		h.Advance(10 * time.Minute)
		at := h.Elapsed()
		if err := h.Runtime.Trigger("p"); err != nil {
			t.Fatal(err)
		}
		h.Settle()
		sw := h.Expect(actortest.Is[actors.SweepStarted]()).(actors.SweepStarted)
		if !sw.Trigger || h.Elapsed() != at {
			t.Fatalf("triggered sweep %+v at %v, want at once (%v)", sw, h.Elapsed(), at)
		}
		h.Expect(actortest.Is[actors.SweepDone]())
		if next := h.Status("p").NextSweep; !next.Equal(h.Now().Add(time.Hour)) {
			t.Fatalf("next sweep %v: the cadence does not restart after a triggered sweep", next)
		}
	})
}

func TestTriggerWhileSweepingFollowsWithoutOverlap(t *testing.T) {
	t.Parallel()
	actortest.Run(t, actors.Config{}, func(t *testing.T, h *actortest.Harness) {
		fake := actortest.NewFakePass(actortest.Block(3))
		h.Register(passes.Registration{Name: "p", New: fake.Factory(), Options: options(time.Hour, func(o *passes.Options) {
			o.MaxStartupStagger = 0
		})})
		h.Start()
		h.ExpectWithin(time.Second, actortest.Is[actors.SweepStarted]())
		for range 3 {
			if err := h.Runtime.Trigger("p"); err != nil {
				t.Fatal(err)
			}
		}
		h.Settle()
		if now, _ := fake.Running(); now != 1 {
			t.Fatalf("running = %d, want the first batch still running", now)
		}
		if st := h.Status("p"); st.State != actors.StateSweeping {
			t.Fatalf("status during the batch = %v: the actor must answer while a batch runs", st.State)
		}
		fake.Release()
		h.Settle()
		h.Expect(actortest.Is[actors.SweepDone]())
		follow := h.Expect(actortest.Is[actors.SweepStarted]()).(actors.SweepStarted)
		if !follow.Trigger {
			t.Fatalf("follow-up = %+v", follow)
		}
		h.Expect(actortest.Is[actors.SweepDone]())
		h.ExpectNone(time.Hour-time.Nanosecond, actortest.Is[actors.SweepStarted]())
		if _, peak := fake.Running(); peak != 1 {
			t.Fatalf("peak concurrent batches = %d, want 1", peak)
		}
	})
}

func TestTriggerErrors(t *testing.T) {
	t.Parallel()
	actortest.Run(t, actors.Config{}, func(t *testing.T, h *actortest.Harness) {
		h.Register(passes.Registration{Name: "p", New: actortest.NewFakePass().Factory(), Options: options(time.Hour)})
		var br *core.BusinessRuleError
		if err := h.Runtime.Trigger("p"); !errors.As(err, &br) {
			t.Fatalf("Trigger before Start = %v", err)
		}
		h.Start()
		var nf *core.NotFoundError
		if err := h.Runtime.Trigger("nope"); !errors.As(err, &nf) || nf.EntityID != "nope" {
			t.Fatalf("Trigger of an unknown pass = %v", err)
		}
	})
}
