package actors_test

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/retentionkit/retention/core"
	"testing"
	"time"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/actors/actortest"
	"github.com/retentionkit/retention/passes"
)

func options(retention time.Duration, mutate ...func(*passes.Options)) passes.Options {
	o := passes.DefaultOptions()
	o.RetentionPeriod = passes.Retain(retention)
	for _, m := range mutate {
		m(&o)
	}
	return o
}

func TestFirstSweepAfterStaggerOffset(t *testing.T) {
	t.Parallel()
	actortest.Run(t, actors.Config{}, func(t *testing.T, h *actortest.Harness) {
		fake := actortest.NewFakePass(actortest.Rows(500), actortest.Rows(20))
		h.Register(passes.Registration{Name: "audit-log", New: fake.Factory(), Options: options(24 * time.Hour)})
		h.Start()
		offset := passes.StaggerOffset("audit-log", time.Minute)
		started := h.Expect(actortest.Is[actors.PassStarted]()).(actors.PassStarted)
		if started.Offset != offset {
			t.Fatalf("offset = %v, want %v", started.Offset, offset)
		}
		sw := h.ExpectWithin(2*time.Minute, actortest.Is[actors.SweepStarted]()).(actors.SweepStarted)
		if h.Elapsed() != offset {
			t.Fatalf("first sweep at %v, want %v", h.Elapsed(), offset)
		}
		if want := actortest.Epoch.Add(offset - 24*time.Hour); !sw.Cutoff.Equal(want) {
			t.Fatalf("cutoff = %v, want %v", sw.Cutoff, want)
		}
		done := h.Expect(actortest.Is[actors.SweepDone]()).(actors.SweepDone)
		if done.Rows != 520 || done.Batches != 2 || done.Reason != actors.Drained || done.WorkRemains {
			t.Fatalf("sweep done = %+v", done)
		}
		st := h.Status("audit-log")
		if st.State != actors.StateWaiting || st.TotalRows != 520 || !st.NextSweep.Equal(h.Now().Add(time.Hour)) {
			t.Fatalf("status = %+v", st)
		}
	})
}

func TestCutoffStaysFixedWhileTheClockMovesMidSweep(t *testing.T) {
	t.Parallel()
	actortest.Run(t, actors.Config{}, func(t *testing.T, h *actortest.Harness) {
		fake := actortest.NewFakePass(actortest.Rows(10), actortest.Rows(10), actortest.Rows(10), actortest.Rows(3))
		h.Register(passes.Registration{Name: "p", New: fake.Factory(), Options: options(time.Hour, func(o *passes.Options) {
			o.BatchSize, o.BatchDelay, o.MaxStartupStagger = 10, 5*time.Second, 0
		})})
		h.Start()
		sw := h.ExpectWithin(time.Second, actortest.Is[actors.SweepStarted]()).(actors.SweepStarted)
		h.ExpectWithin(time.Minute, actortest.Is[actors.SweepDone]())
		calls := fake.Calls()
		if len(calls) != 4 {
			t.Fatalf("calls = %d, want 4", len(calls))
		}
		for i, c := range calls {
			if !c.OlderThan.Equal(sw.Cutoff) {
				t.Fatalf("batch %d cutoff %v, want the sweep's %v", i, c.OlderThan, sw.Cutoff)
			}
		}
		if h.Elapsed() != 15*time.Second {
			t.Fatalf("sweep took until %v, want 15s (three delays)", h.Elapsed())
		}
	})
}

func TestBatchDelayPacesBatchesAndNoneFollowsTheLast(t *testing.T) {
	t.Parallel()
	actortest.Run(t, actors.Config{}, func(t *testing.T, h *actortest.Harness) {
		fake := actortest.NewFakePass(actortest.Rows(5), actortest.Rows(5), actortest.Rows(2))
		h.Register(passes.Registration{Name: "p", New: fake.Factory(), Options: options(time.Hour, func(o *passes.Options) {
			o.BatchSize, o.BatchDelay, o.MaxStartupStagger, o.SweepInterval = 5, 3*time.Second, 0, 10*time.Minute
		})})
		h.Start()
		var at []time.Duration
		for range 3 {
			h.ExpectWithin(time.Minute, actortest.Is[actors.BatchDone]())
			at = append(at, h.Elapsed())
		}
		if want := []time.Duration{0, 3 * time.Second, 6 * time.Second}; !slices.Equal(at, want) {
			t.Fatalf("batches at %v, want %v", at, want)
		}
		h.Expect(actortest.Is[actors.SweepDone]())
		if h.Elapsed() != 6*time.Second {
			t.Fatalf("sweep ended at %v: a delay followed the last batch", h.Elapsed())
		}
		if next := h.Status("p").NextSweep.Sub(actortest.Epoch); next != 6*time.Second+10*time.Minute {
			t.Fatalf("next sweep at %v, want one interval after the sweep ended", next)
		}
	})
}

func TestMaxBatchesPerSweepYieldsAndTheNextSweepContinues(t *testing.T) {
	t.Parallel()
	actortest.Run(t, actors.Config{}, func(t *testing.T, h *actortest.Harness) {
		fake := actortest.NewFakePass().Otherwise(actortest.Rows(10))
		fake.Then(actortest.Rows(10), actortest.Rows(10), actortest.Rows(10), actortest.Rows(10), actortest.Rows(4))
		h.Register(passes.Registration{Name: "p", New: fake.Factory(), Options: options(time.Hour, func(o *passes.Options) {
			o.BatchSize, o.MaxBatchesPerSweep, o.MaxStartupStagger, o.SweepInterval = 10, 3, 0, 30*time.Minute
		})})
		h.Start()
		first := h.ExpectWithin(time.Second, actortest.Is[actors.SweepDone]()).(actors.SweepDone)
		if first.Batches != 3 || first.Rows != 30 || !first.WorkRemains || first.Reason != actors.BatchLimit {
			t.Fatalf("first sweep = %+v", first)
		}
		if !h.Status("p").LastWorkRemains {
			t.Fatal("status does not say work remains")
		}
		h.ExpectNone(30*time.Minute-time.Nanosecond, actortest.Is[actors.SweepStarted]())
		second := h.ExpectWithin(time.Nanosecond, actortest.Is[actors.SweepDone]()).(actors.SweepDone)
		if second.Batches != 2 || second.Rows != 14 || second.WorkRemains || second.Reason != actors.Drained {
			t.Fatalf("second sweep = %+v", second)
		}
	})
}

func TestNilRetentionNeverSweeps(t *testing.T) {
	t.Parallel()
	actortest.Run(t, actors.Config{}, func(t *testing.T, h *actortest.Harness) {
		fake := actortest.NewFakePass()
		h.Register(passes.Registration{Name: "keep-all", New: fake.Factory(), Options: passes.DefaultOptions()})
		h.Start()
		h.ExpectNone(48*time.Hour, actortest.Is[actors.SweepStarted]())
		if len(fake.Calls()) != 0 || fake.Builds() != 0 {
			t.Fatalf("a pass with no retention ran: %d calls, %d builds", len(fake.Calls()), fake.Builds())
		}
		if st := h.Status("keep-all"); st.State != actors.StateDisabled {
			t.Fatalf("state = %v, want disabled", st.State)
		}
		if err := h.Runtime.Trigger("keep-all"); err == nil {
			t.Fatal("Trigger of a pass with no retention succeeded")
		}
	})
}

func TestEffectiveIntervalIsTheSmallerOfIntervalAndRetention(t *testing.T) {
	t.Parallel()
	actortest.Run(t, actors.Config{}, func(t *testing.T, h *actortest.Harness) {
		fake := actortest.NewFakePass()
		h.Register(passes.Registration{Name: "short", New: fake.Factory(), Options: options(10*time.Minute, func(o *passes.Options) {
			o.SweepInterval, o.MaxStartupStagger = time.Hour, 0
		})})
		h.Start()
		var at []time.Duration
		for range 4 {
			h.ExpectWithin(time.Hour, actortest.Is[actors.SweepStarted]())
			at = append(at, h.Elapsed())
		}
		if want := []time.Duration{0, 10 * time.Minute, 20 * time.Minute, 30 * time.Minute}; !slices.Equal(at, want) {
			t.Fatalf("sweeps at %v, want %v", at, want)
		}
	})
}

func TestEverySweepGetsAFreshPassValue(t *testing.T) {
	t.Parallel()
	actortest.Run(t, actors.Config{}, func(t *testing.T, h *actortest.Harness) {
		fake := actortest.NewFakePass(actortest.Rows(2), actortest.Rows(1), actortest.Rows(2), actortest.Rows(0))
		h.Register(passes.Registration{Name: "p", New: fake.Factory(), Options: options(time.Hour, func(o *passes.Options) {
			o.BatchSize, o.MaxStartupStagger = 2, 0
		})})
		h.Start()
		h.ExpectWithin(time.Second, actortest.Is[actors.SweepDone]())
		h.ExpectWithin(2*time.Hour, actortest.Is[actors.SweepDone]())
		var instances []int
		for _, c := range fake.Calls() {
			instances = append(instances, c.Instance)
		}
		if fake.Builds() != 2 || len(instances) != 4 || instances[0] != instances[1] || instances[2] != instances[3] || instances[0] == instances[2] {
			t.Fatalf("builds %d, instances per call %v: want one value per sweep", fake.Builds(), instances)
		}
	})
}

func TestCountOutsideTheBatchIsADeterministicFailure(t *testing.T) {
	t.Parallel()
	for _, rows := range []int{-1, 11} {
		actortest.Run(t, actors.Config{}, func(t *testing.T, h *actortest.Harness) {
			fake := actortest.NewFakePass(actortest.Rows(rows))
			h.Register(passes.Registration{Name: "buggy", New: fake.Factory(), Options: options(time.Hour, func(o *passes.Options) {
				o.BatchSize, o.MaxStartupStagger, o.SweepInterval = 10, 0, 20*time.Minute
			})})
			h.Start()
			failed := h.ExpectWithin(time.Second, actortest.Is[actors.PassFailed]()).(actors.PassFailed)
			if !strings.Contains(failed.Err.Error(), `"buggy"`) || !strings.Contains(failed.Err.Error(), fmt.Sprint(rows)) || !core.IsDeterministic(failed.Err) {
				t.Fatalf("failure = %v", failed.Err)
			}
			restarted := h.Expect(actortest.Is[actors.PassRestarted]()).(actors.PassRestarted)
			if restarted.Backoff != 20*time.Minute {
				t.Fatalf("backoff = %v, want the interval", restarted.Backoff)
			}
		})
	}
}

func TestBatchTimeoutCancelsAHungBatch(t *testing.T) {
	t.Parallel()
	actortest.Run(t, actors.Config{}, func(t *testing.T, h *actortest.Harness) {
		fake := actortest.NewFakePass(actortest.Block(5))
		h.Register(passes.Registration{Name: "hung", New: fake.Factory(), Options: options(time.Hour, func(o *passes.Options) {
			o.MaxStartupStagger, o.BatchTimeout, o.SweepInterval = 0, 30*time.Second, 10*time.Minute
		})})
		h.Start()
		h.ExpectWithin(time.Minute, actortest.Is[actors.PassCancelled]())
		if h.Elapsed() != 30*time.Second {
			t.Fatalf("cancelled at %v, want 30s", h.Elapsed())
		}
		done := h.Expect(actortest.Is[actors.SweepDone]()).(actors.SweepDone)
		if done.Reason != actors.Cancelled {
			t.Fatalf("sweep done = %+v", done)
		}
		if slots := h.Runtime.Status().Slots[passes.DefaultDatabase]; slots.InUse != 0 {
			t.Fatalf("slots in use after the timeout = %d", slots.InUse)
		}
		h.ExpectNone(10*time.Minute-time.Nanosecond, actortest.Is[actors.SweepStarted]())
		h.ExpectWithin(time.Nanosecond, actortest.Is[actors.SweepStarted]())
	})
}

// lockedRows is a pass over rows of which the last few are locked by another
// transaction: it passes them over, as SKIP LOCKED does, and says more is waiting.
func lockedRows(expired, locked int) passes.Pass {
	left := expired - locked
	return passes.PassFunc(func(ctx context.Context, size int, _ time.Time) (int, error) {
		n := min(size, left)
		left -= n
		if n < size && locked > 0 {
			passes.ReportMoreWaiting(ctx)
		}
		return n, nil
	})
}

func TestRowsPassedOverEndTheSweepAsContendedWithWorkRemaining(t *testing.T) {
	t.Parallel()
	actortest.Run(t, actors.Config{}, func(t *testing.T, h *actortest.Harness) {
		h.Register(passes.Registration{Name: "p", New: passes.Reuse(lockedRows(25, 5)), Options: options(time.Hour, func(o *passes.Options) {
			o.BatchSize, o.MaxStartupStagger = 10, 0
		})})
		h.Start()
		done := h.ExpectWithin(time.Second, actortest.Is[actors.SweepDone]()).(actors.SweepDone)
		// 10 + 10 full, then 0 (short, more waiting) and ContendedAfter batches taking nothing.
		if done.Reason != actors.Contended || !done.WorkRemains || done.Rows != 20 || done.Batches != 2+actors.ContendedAfter {
			t.Fatalf("sweep = %+v, want contended after %d batches with 20 rows", done, 2+actors.ContendedAfter)
		}
		st := h.Status("p")
		if !st.LastWorkRemains || st.LastSweepReason != actors.Contended || st.ConsecutiveFailures != 0 {
			t.Fatalf("status = %+v", st)
		}
		if !st.NextSweep.Equal(h.Now().Add(time.Hour)) {
			t.Fatalf("next sweep at %v, want the normal interval after %v", st.NextSweep, h.Now())
		}
	})
}

func TestBatchesTakingNothingButFewerThanContendedAfterKeepTheSweepGoing(t *testing.T) {
	t.Parallel()
	actortest.Run(t, actors.Config{}, func(t *testing.T, h *actortest.Harness) {
		calls := 0
		pass := passes.PassFunc(func(ctx context.Context, size int, _ time.Time) (int, error) {
			calls++
			if calls < actors.ContendedAfter { // another sweeper took these batches
				passes.ReportMoreWaiting(ctx)
				return 0, nil
			}
			return 1, nil
		})
		h.Register(passes.Registration{Name: "p", New: passes.Reuse(pass), Options: options(time.Hour, func(o *passes.Options) {
			o.BatchSize, o.MaxStartupStagger = 10, 0
		})})
		h.Start()
		done := h.ExpectWithin(time.Second, actortest.Is[actors.SweepDone]()).(actors.SweepDone)
		if done.Reason != actors.Drained || done.Rows != 1 || done.Batches != actors.ContendedAfter {
			t.Fatalf("sweep = %+v, want drained after %d batches", done, actors.ContendedAfter)
		}
	})
}
