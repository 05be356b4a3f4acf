package actortest_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/actors/actortest"
	"github.com/retentionkit/retention/core/retry"
)

func TestFakePassPlaysItsScript(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	fake := actortest.NewFakePass(actortest.Rows(3), actortest.Fail(boom), actortest.RetryAfter(boom, time.Minute)).Otherwise(actortest.Rows(9))
	ctx := context.Background()
	p1, _ := fake.Factory()(ctx)
	p2, _ := fake.Factory()(ctx)
	cutoff := actortest.Epoch.Add(-time.Hour)
	if n, err := p1.PurgeBatch(ctx, 10, cutoff); n != 3 || err != nil {
		t.Fatalf("step 1 = %d, %v", n, err)
	}
	if _, err := p1.PurgeBatch(ctx, 10, cutoff); !errors.Is(err, boom) {
		t.Fatalf("step 2 = %v", err)
	}
	_, err := p2.PurgeBatch(ctx, 10, cutoff)
	if a, ok := retry.AfterOf(err); !ok {
		t.Fatalf("step 3 = %v, want a retry-after", err)
	} else if d, _ := a.RetryAfter(); d != time.Minute {
		t.Fatalf("step 3 delay = %v", d)
	}
	if n, _ := p2.PurgeBatch(ctx, 10, cutoff); n != 9 {
		t.Fatalf("fallback = %d, want 9", n)
	}
	calls := fake.Calls()
	if len(calls) != 4 || calls[0].Instance != 1 || calls[2].Instance != 2 || calls[0].BatchSize != 10 || !calls[0].OlderThan.Equal(cutoff) {
		t.Fatalf("calls = %+v", calls)
	}
	if fake.Builds() != 2 {
		t.Fatalf("builds = %d", fake.Builds())
	}
}

func TestFakePassPanics(t *testing.T) {
	t.Parallel()
	fake := actortest.NewFakePass(actortest.Panic("bug"))
	p, _ := fake.Factory()(context.Background())
	defer func() {
		if recover() != "bug" {
			t.Fatal("no panic")
		}
		if now, _ := fake.Running(); now != 0 {
			t.Fatalf("running after a panic = %d", now)
		}
	}()
	_, _ = p.PurgeBatch(context.Background(), 1, actortest.Epoch)
}

func TestFakePassBlocksUntilReleasedOrCancelled(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		fake := actortest.NewFakePass(actortest.Block(4), actortest.Block(5))
		p, _ := fake.Factory()(context.Background())
		results := make(chan int, 2)
		go func() { n, _ := p.PurgeBatch(context.Background(), 10, actortest.Epoch); results <- n }()
		synctest.Wait()
		if fake.Blocked() != 1 {
			t.Fatalf("blocked = %d", fake.Blocked())
		}
		fake.Release()
		if n := <-results; n != 4 {
			t.Fatalf("released batch = %d", n)
		}
		ctx, cancel := context.WithCancel(context.Background())
		errs := make(chan error, 1)
		go func() { _, err := p.PurgeBatch(ctx, 10, actortest.Epoch); errs <- err }()
		synctest.Wait()
		cancel()
		if err := <-errs; !errors.Is(err, context.Canceled) || fake.Blocked() != 0 {
			t.Fatalf("cancelled batch = %v, blocked %d", err, fake.Blocked())
		}
		if _, peak := fake.Running(); peak != 1 {
			t.Fatalf("peak = %d", peak)
		}
	})
}

func TestMatchers(t *testing.T) {
	t.Parallel()
	events := []actors.Event{
		actors.SweepStarted{Name: "a"},
		actors.SweepDone{Name: "a", Rows: 1},
		actors.SweepDone{Name: "b", Rows: 2},
	}
	if got := actortest.Filter[actors.SweepDone](events, actortest.Is[actors.SweepDone]()); len(got) != 2 {
		t.Fatalf("Is: %v", got)
	}
	if got := actortest.Filter[actors.SweepDone](events, actortest.Of("b", actortest.Is[actors.SweepDone]())); len(got) != 1 || got[0].Rows != 2 {
		t.Fatalf("Of: %v", got)
	}
	big := actortest.Where(func(e actors.SweepDone) bool { return e.Rows > 1 })
	if big(events[0]) || big(events[1]) || !big(events[2]) {
		t.Fatal("Where")
	}
}

func TestHarnessAdvanceFiresTimersAtTheirTime(t *testing.T) {
	t.Parallel()
	actortest.Run(t, actors.Config{}, func(t *testing.T, h *actortest.Harness) {
		var fired []time.Duration
		var tick func()
		tick = func() {
			fired = append(fired, h.Elapsed())
			if len(fired) < 3 {
				h.Clock.AfterFunc(time.Minute, tick)
			}
		}
		h.Clock.AfterFunc(time.Minute, tick)
		h.Advance(time.Hour)
		if len(fired) != 3 || fired[0] != time.Minute || fired[2] != 3*time.Minute || h.Elapsed() != time.Hour {
			t.Fatalf("fired at %v, now %v", fired, h.Elapsed())
		}
	})
}
