package actors_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/actors/actortest"
	"github.com/retentionkit/retention/passes"
)

func TestAdmissionLimitHoldsWithFiftyPassesContending(t *testing.T) {
	t.Parallel()
	actortest.Run(t, actors.Config{MaxConcurrentDeletes: 3}, func(t *testing.T, h *actortest.Harness) {
		fake := actortest.NewFakePass().Otherwise(actortest.Block(1))
		for i := range 50 {
			h.Register(passes.Registration{Name: fmt.Sprintf("p%02d", i), New: fake.Factory(), Options: options(time.Hour, func(o *passes.Options) {
				o.BatchSize, o.MaxStartupStagger, o.MaxBatchesPerSweep = 1, 0, 2
			})})
		}
		h.Start()
		for round := 0; len(fake.Calls()) < 100; round++ {
			if round > 200 {
				t.Fatalf("only %d of 100 batches ran", len(fake.Calls()))
			}
			now, _ := fake.Running()
			if now > 3 {
				t.Fatalf("%d batches running at once, limit 3", now)
			}
			if slots := h.Runtime.Status().Slots[passes.DefaultDatabase]; slots.InUse > slots.Capacity || slots.Capacity != 3 {
				t.Fatalf("slots = %+v", slots)
			}
			fake.Release()
			h.Settle()
		}
		if _, peak := fake.Running(); peak != 3 {
			t.Fatalf("peak concurrency = %d, want exactly the limit 3", peak)
		}
		fake.Otherwise(actortest.Rows(0))
		fake.Release()
	})
}

func TestSameTargetNeverRunsTwoBatchesAtOnce(t *testing.T) {
	t.Parallel()
	actortest.Run(t, actors.Config{MaxConcurrentDeletes: 5}, func(t *testing.T, h *actortest.Harness) {
		shared := actortest.NewFakePass().Otherwise(actortest.Block(0))
		other := actortest.NewFakePass().Otherwise(actortest.Block(0))
		opts := options(time.Hour, func(o *passes.Options) { o.MaxStartupStagger = 0 })
		h.Register(
			passes.Registration{Name: "a", Target: "audit_log", New: shared.Factory(), Options: opts},
			passes.Registration{Name: "b", Target: "audit_log", New: shared.Factory(), Options: opts},
			passes.Registration{Name: "c", Target: "sessions", New: other.Factory(), Options: opts},
		)
		h.Start()
		if now, _ := shared.Running(); now != 1 {
			t.Fatalf("%d batches on audit_log at once, want 1", now)
		}
		if now, _ := other.Running(); now != 1 {
			t.Fatalf("the sessions pass waited for audit_log: %d running", now)
		}
		shared.Release()
		h.Settle()
		if len(shared.Calls()) != 2 {
			t.Fatalf("the second audit_log pass did not follow: %d calls", len(shared.Calls()))
		}
		shared.Release()
		other.Release()
	})
}

func TestBatchDelayHoldsNoSlot(t *testing.T) {
	t.Parallel()
	actortest.Run(t, actors.Config{MaxConcurrentDeletes: 1}, func(t *testing.T, h *actortest.Harness) {
		paced := actortest.NewFakePass(actortest.Rows(1), actortest.Rows(0))
		eager := actortest.NewFakePass()
		h.Register(
			passes.Registration{Name: "paced", New: paced.Factory(), Options: options(time.Hour, func(o *passes.Options) {
				o.BatchSize, o.BatchDelay, o.MaxStartupStagger = 1, time.Hour, 0
			})},
			passes.Registration{Name: "eager", Target: "other", New: eager.Factory(), Options: options(time.Hour, func(o *passes.Options) {
				o.MaxStartupStagger = 0
			})},
		)
		h.Start()
		h.ExpectWithin(time.Minute, actortest.Of("eager", actortest.Is[actors.SweepDone]()))
		if h.Elapsed() != 0 {
			t.Fatalf("eager swept at %v: the paced pass held the only slot during its delay", h.Elapsed())
		}
	})
}

func TestStoppedPassActorGivesItsSlotBack(t *testing.T) {
	t.Parallel()
	actortest.Run(t, actors.Config{MaxConcurrentDeletes: 1}, func(t *testing.T, h *actortest.Harness) {
		holder := actortest.NewFakePass().Otherwise(actortest.Block(0))
		waiter := actortest.NewFakePass()
		h.Register(
			passes.Registration{Name: "holder", New: holder.Factory(), Options: options(time.Hour, func(o *passes.Options) { o.MaxStartupStagger = 0 })},
			passes.Registration{Name: "waiter", New: waiter.Factory(), Options: options(time.Hour)},
		)
		h.Start()
		h.ExpectWithin(time.Minute, actortest.Of("waiter", actortest.Is[actors.SweepStarted]()))
		if slots := h.Runtime.Status().Slots[passes.DefaultDatabase]; slots.InUse != 1 || len(waiter.Calls()) != 0 {
			t.Fatalf("slots %+v, waiter calls %d", slots, len(waiter.Calls()))
		}
		pid := passPID(t, h, "holder")
		h.Runtime.System().Root.Stop(pid)
		h.ExpectWithin(time.Second, actortest.Of("holder", actortest.Is[actors.PassStopped]()))
		// The waiter's sweep may be heard before or after the holder's stop: the release
		// is sent before the stop is published.
		if done := actortest.Filter[actors.SweepDone](h.Probe.Events(), actortest.Of("waiter", actortest.Is[actors.SweepDone]())); len(done) != 1 {
			t.Fatalf("waiter sweeps done = %d, want 1", len(done))
		}
		if len(waiter.Calls()) != 1 {
			t.Fatalf("waiter calls = %d: the stopped holder kept the slot", len(waiter.Calls()))
		}
		if slots := h.Runtime.Status().Slots[passes.DefaultDatabase]; slots.InUse != 0 {
			t.Fatalf("slots in use = %d", slots.InUse)
		}
	})
}

func passPID(t *testing.T, h *actortest.Harness, name string) *actor.PID {
	t.Helper()
	pid := h.Runtime.PassPID(name)
	if pid == nil {
		t.Fatalf("no actor for pass %q", name)
	}
	return pid
}

func TestAHolderOfBackToBackBatchesYieldsToAWaiterAtTheBatchBoundary(t *testing.T) {
	t.Parallel()
	actortest.Run(t, actors.Config{MaxConcurrentDeletes: 1}, func(t *testing.T, h *actortest.Harness) {
		var mu sync.Mutex
		var order []string
		record := func(name string, f *actortest.FakePass) passes.Factory {
			inner := f.Factory()
			return func(ctx context.Context) (passes.Pass, error) {
				p, err := inner(ctx)
				return passes.PassFunc(func(ctx context.Context, size int, cutoff time.Time) (int, error) {
					mu.Lock()
					order = append(order, name)
					mu.Unlock()
					return p.PurgeBatch(ctx, size, cutoff)
				}), err
			}
		}
		busy := actortest.NewFakePass().Otherwise(actortest.Block(2)) // always a full batch
		waiter := actortest.NewFakePass(actortest.Block(0))
		h.Register(
			passes.Registration{Name: "busy", New: record("busy", busy), Options: options(time.Hour, func(o *passes.Options) {
				o.BatchSize, o.MaxStartupStagger, o.MaxBatchesPerSweep = 2, 0, 1000
			})},
			passes.Registration{Name: "waiter", Target: "other", New: record("waiter", waiter), Options: options(time.Hour)},
		)
		h.Start()
		busy.Release() // uncontended: the next batch runs on the slot it holds
		h.Settle()
		h.ExpectWithin(time.Minute, actortest.Of("waiter", actortest.Is[actors.SweepStarted]()))
		busy.Release() // the batch boundary: busy must give the slot to the waiter now
		h.Settle()
		waiter.Release()
		h.Settle()
		mu.Lock()
		got := slices.Clone(order)
		mu.Unlock()
		if want := []string{"busy", "busy", "waiter", "busy"}; !slices.Equal(got[:min(4, len(got))], want) {
			t.Fatalf("batches ran in the order %v, want %v...", got, want)
		}
		busy.Otherwise(actortest.Rows(0))
		busy.Release()
	})
}
