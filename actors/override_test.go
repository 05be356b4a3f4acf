package actors_test

import (
	"strings"
	"testing"
	"time"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/actors/actortest"
	"github.com/retentionkit/retention/passes"
)

func ptr[T any](v T) *T { return &v }

func TestOverrideBatchSizeAndDelayFromTheNextBatch(t *testing.T) {
	t.Parallel()
	actortest.Run(t, actors.Config{}, func(t *testing.T, h *actortest.Harness) {
		fake := actortest.NewFakePass(actortest.Block(10)).Otherwise(actortest.Rows(7))
		h.Register(passes.Registration{Name: "p", New: fake.Factory(), Options: options(time.Hour, func(o *passes.Options) {
			o.MaxStartupStagger, o.BatchSize, o.MaxBatchesPerSweep = 0, 10, 3
		})})
		h.Start()
		h.ExpectWithin(time.Second, actortest.Is[actors.SweepStarted]())
		h.Settle()
		// The batch in flight ran with 10; the override applies from the next one.
		if err := h.Runtime.SetOverride("p", actors.Override{BatchSize: ptr(7), BatchDelay: ptr(time.Second)}); err != nil {
			t.Fatal(err)
		}
		applied := h.Expect(actortest.Is[actors.SettingsApplied]()).(actors.SettingsApplied)
		if applied.BatchSize != 7 || applied.BatchDelay != time.Second {
			t.Fatalf("applied %+v", applied)
		}
		fake.Release()
		h.Settle()
		h.Expect(actortest.Is[actors.BatchDone]())
		h.ExpectNone(time.Second-time.Nanosecond, actortest.Is[actors.BatchDone]())
		h.ExpectWithin(time.Nanosecond, actortest.Is[actors.BatchDone]())
		done := h.ExpectWithin(time.Second, actortest.Is[actors.SweepDone]()).(actors.SweepDone)
		if done.Reason != actors.BatchLimit || done.Rows != 10+7+7 {
			t.Fatalf("sweep %+v: a 7-row batch is full at batch size 7", done)
		}
		calls := fake.Calls()
		if calls[0].BatchSize != 10 || calls[1].BatchSize != 7 || calls[2].BatchSize != 7 {
			t.Fatalf("batch sizes %+v", calls)
		}
		if st := h.Status("p"); st.BatchSize != 7 || st.BatchDelay != time.Second || st.SweepInterval != time.Hour {
			t.Fatalf("status %+v", st)
		}
		// The zero override returns the pass to its registration.
		if err := h.Runtime.SetOverride("p", actors.Override{}); err != nil {
			t.Fatal(err)
		}
		h.Settle()
		if st := h.Status("p"); st.BatchSize != 10 || st.BatchDelay != 0 {
			t.Fatalf("status after clearing %+v", st)
		}
	})
}

func TestOverrideShorterIntervalEndsTheWait(t *testing.T) {
	t.Parallel()
	actortest.Run(t, actors.Config{}, func(t *testing.T, h *actortest.Harness) {
		fake := actortest.NewFakePass()
		h.Register(passes.Registration{Name: "p", New: fake.Factory(), Options: options(24*time.Hour, func(o *passes.Options) {
			o.MaxStartupStagger = 0
		})})
		h.Start()
		h.ExpectWithin(time.Second, actortest.Is[actors.SweepDone]())
		h.Advance(20 * time.Minute)
		at := h.Elapsed()
		// 10 minutes after the last sweep's end is already past: the sweep starts now.
		if err := h.Runtime.SetOverride("p", actors.Override{SweepInterval: ptr(10 * time.Minute)}); err != nil {
			t.Fatal(err)
		}
		h.Settle()
		h.Expect(actortest.Is[actors.SweepStarted]())
		if h.Elapsed() != at {
			t.Fatalf("sweep at %v, want at once (%v)", h.Elapsed(), at)
		}
		h.Expect(actortest.Is[actors.SweepDone]())
		// Then the cadence is the new interval.
		h.ExpectNone(10*time.Minute-time.Nanosecond, actortest.Is[actors.SweepStarted]())
		h.ExpectWithin(time.Nanosecond, actortest.Is[actors.SweepStarted]())
		h.Expect(actortest.Is[actors.SweepDone]())
		// An interval not yet over moves the timer forward, not to now.
		if err := h.Runtime.SetOverride("p", actors.Override{SweepInterval: ptr(5 * time.Minute)}); err != nil {
			t.Fatal(err)
		}
		h.ExpectNone(5*time.Minute-time.Nanosecond, actortest.Is[actors.SweepStarted]())
		h.ExpectWithin(time.Nanosecond, actortest.Is[actors.SweepStarted]())
	})
}

func TestPauseHoldsAfterTheBatchInFlightAndResumeContinues(t *testing.T) {
	t.Parallel()
	actortest.Run(t, actors.Config{}, func(t *testing.T, h *actortest.Harness) {
		fake := actortest.NewFakePass(actortest.Block(10), actortest.Rows(10), actortest.Rows(3))
		h.Register(passes.Registration{Name: "p", New: fake.Factory(), Options: options(time.Hour, func(o *passes.Options) {
			o.MaxStartupStagger, o.BatchSize = 0, 10
		})})
		h.Start()
		h.ExpectWithin(time.Second, actortest.Is[actors.SweepStarted]())
		h.Settle()
		if err := h.Runtime.SetOverride("p", actors.Override{Paused: true}); err != nil {
			t.Fatal(err)
		}
		h.Settle()
		if st := h.Status("p"); !st.Paused || st.State != actors.StateSweeping {
			t.Fatalf("status with the batch in flight %+v", st)
		}
		fake.Release()
		h.Settle()
		h.Expect(actortest.Is[actors.BatchDone]())
		h.ExpectNone(3*time.Hour, actortest.Is[actors.BatchDone]())
		if st := h.Status("p"); st.State != actors.StatePaused || len(fake.Calls()) != 1 {
			t.Fatalf("paused status %+v, %d calls", st, len(fake.Calls()))
		}
		if err := h.Runtime.SetOverride("p", actors.Override{}); err != nil {
			t.Fatal(err)
		}
		h.Settle()
		done := h.Expect(actortest.Is[actors.SweepDone]()).(actors.SweepDone)
		if done.Rows != 23 || done.Reason != actors.Drained {
			t.Fatalf("resumed sweep %+v", done)
		}
		if st := h.Status("p"); st.Paused || st.State != actors.StateWaiting {
			t.Fatalf("status after resume %+v", st)
		}
	})
}

func TestPauseHoldsADueSweepAndATrigger(t *testing.T) {
	t.Parallel()
	actortest.Run(t, actors.Config{}, func(t *testing.T, h *actortest.Harness) {
		fake := actortest.NewFakePass()
		h.Register(passes.Registration{Name: "p", New: fake.Factory(), Options: options(time.Hour, func(o *passes.Options) {
			o.MaxStartupStagger = 0
		})})
		h.Start()
		h.ExpectWithin(time.Second, actortest.Is[actors.SweepDone]())
		if err := h.Runtime.SetOverride("p", actors.Override{Paused: true}); err != nil {
			t.Fatal(err)
		}
		h.Settle()
		if st := h.Status("p"); st.State != actors.StatePaused {
			t.Fatalf("status %+v", st)
		}
		if err := h.Runtime.Trigger("p"); err != nil {
			t.Fatal(err)
		}
		h.ExpectNone(5*time.Hour, actortest.Is[actors.SweepStarted]())
		at := h.Elapsed()
		if err := h.Runtime.SetOverride("p", actors.Override{}); err != nil {
			t.Fatal(err)
		}
		h.Settle()
		started := h.Expect(actortest.Is[actors.SweepStarted]()).(actors.SweepStarted)
		if !started.Trigger || h.Elapsed() != at {
			t.Fatalf("held sweep %+v at %v, want the triggered sweep at once", started, h.Elapsed())
		}
		h.Expect(actortest.Is[actors.SweepDone]())
		h.ExpectNone(time.Hour-time.Nanosecond, actortest.Is[actors.SweepStarted]())
	})
}

func TestPausedPassDrainsOnStop(t *testing.T) {
	t.Parallel()
	actortest.Run(t, actors.Config{}, func(t *testing.T, h *actortest.Harness) {
		fake := actortest.NewFakePass(actortest.Rows(10)).Otherwise(actortest.Rows(10))
		h.Register(passes.Registration{Name: "p", New: fake.Factory(), Options: options(time.Hour, func(o *passes.Options) {
			o.MaxStartupStagger, o.BatchSize, o.BatchDelay = 0, 10, time.Second
		})})
		h.Start()
		h.ExpectWithin(time.Second, actortest.Is[actors.BatchDone]())
		if err := h.Runtime.SetOverride("p", actors.Override{Paused: true}); err != nil {
			t.Fatal(err)
		}
		h.ExpectNone(time.Minute, actortest.Is[actors.BatchDone]())
		if err := h.Stop(t.Context()); err != nil {
			t.Fatal(err)
		}
		done := h.Expect(actortest.Is[actors.SweepDone]()).(actors.SweepDone)
		if done.Reason != actors.Stopped {
			t.Fatalf("sweep %+v", done)
		}
	})
}

func TestOverrideRefusesBadValues(t *testing.T) {
	t.Parallel()
	actortest.Run(t, actors.Config{}, func(t *testing.T, h *actortest.Harness) {
		h.Register(passes.Registration{Name: "p", New: actortest.NewFakePass().Factory(), Options: options(time.Hour)})
		h.Start()
		cases := []struct {
			ov   actors.Override
			want string
		}{
			{actors.Override{BatchSize: ptr(0)}, `pass "p": batch_size must be at least 1, got 0`},
			{actors.Override{BatchDelay: ptr(-time.Second)}, `pass "p": batch_delay must not be negative`},
			{actors.Override{SweepInterval: ptr(time.Duration(0))}, `pass "p": sweep_interval must be positive`},
			{actors.Override{Pacing: "fast"}, `pass "p": pacing must be "fixed" or "adaptive", got "fast"`},
		}
		for _, c := range cases {
			if err := h.Runtime.SetOverride("p", c.ov); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("SetOverride(%+v) = %v, want %q", c.ov, err, c.want)
			}
		}
		if err := h.Runtime.SetOverride("nope", actors.Override{}); err == nil {
			t.Error("SetOverride of an unknown pass succeeded")
		}
	})
}
