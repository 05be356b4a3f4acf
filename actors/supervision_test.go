package actors_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/actors/actortest"
	"github.com/retentionkit/retention/core"
	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/supervisor"
)

var errConnReset = errors.New("connection reset by peer")

func failingOptions(o *passes.Options) { o.MaxStartupStagger, o.SweepInterval = 0, time.Hour }

func backoffs(h *actortest.Harness, n int) []time.Duration {
	var out []time.Duration
	for range n {
		r := h.ExpectWithin(time.Hour, actortest.Is[actors.PassRestarted]()).(actors.PassRestarted)
		out = append(out, r.Backoff)
	}
	return out
}

func TestFailureBacksOffExponentiallyCappedAndResetsAfterAGoodSweep(t *testing.T) {
	t.Parallel()
	cfg := actors.Config{Supervision: supervisor.Policy{
		Backoff: supervisor.Backoff{Initial: time.Second, Max: 10 * time.Second, Multiplier: 2},
		Limit:   supervisor.Limit{MaxRestarts: -1},
	}}
	actortest.Run(t, cfg, func(t *testing.T, h *actortest.Harness) {
		fake := actortest.NewFakePass()
		for range 6 {
			fake.Then(actortest.Fail(errConnReset))
		}
		fake.Then(actortest.Rows(0), actortest.Fail(errConnReset))
		h.Register(passes.Registration{Name: "flaky", New: fake.Factory(), Options: options(time.Hour, failingOptions)})
		h.Start()
		var sweepsAt []time.Duration
		got := backoffs(h, 6)
		if want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 10 * time.Second, 10 * time.Second}; !slices.Equal(got, want) {
			t.Fatalf("backoffs = %v, want %v", got, want)
		}
		for _, c := range fake.Calls() {
			sweepsAt = append(sweepsAt, c.OlderThan.Add(time.Hour).Sub(actortest.Epoch))
		}
		if want := []time.Duration{0, 1 * time.Second, 3 * time.Second, 7 * time.Second, 15 * time.Second, 25 * time.Second}; !slices.Equal(sweepsAt, want) {
			t.Fatalf("sweeps at %v, want %v (each after its backoff)", sweepsAt, want)
		}
		good := h.ExpectWithin(time.Minute, actortest.Is[actors.SweepDone]()).(actors.SweepDone)
		if good.Reason != actors.Drained || h.Status("flaky").ConsecutiveFailures != 0 {
			t.Fatalf("good sweep = %+v, status %+v", good, h.Status("flaky"))
		}
		if got := backoffs(h, 1); got[0] != time.Second {
			t.Fatalf("backoff after a good sweep = %v, want the initial 1s", got[0])
		}
		if st := h.Status("flaky"); st.Failures != 7 || st.Restarts != 7 || st.LastError == "" {
			t.Fatalf("status = %+v", st)
		}
	})
}

func TestPanicInAPassIsSupervisedLikeAnError(t *testing.T) {
	t.Parallel()
	actortest.Run(t, actors.Config{}, func(t *testing.T, h *actortest.Harness) {
		fake := actortest.NewFakePass(actortest.Panic("nil map"))
		h.Register(passes.Registration{Name: "p", New: fake.Factory(), Options: options(time.Hour, failingOptions)})
		h.Start()
		failed := h.ExpectWithin(time.Second, actortest.Is[actors.PassFailed]()).(actors.PassFailed)
		var p *core.PanicError
		if !errors.As(failed.Err, &p) || p.Value != "nil map" {
			t.Fatalf("failure = %v", failed.Err)
		}
		r := h.Expect(actortest.Is[actors.PassRestarted]()).(actors.PassRestarted)
		if r.Class != supervisor.Panic || r.Backoff != supervisor.DefaultInitialBackoff {
			t.Fatalf("restart = %+v", r)
		}
		h.ExpectWithin(2*time.Second, actortest.Is[actors.SweepDone]())
	})
}

func TestDeterministicErrorWaitsTheInterval(t *testing.T) {
	t.Parallel()
	actortest.Run(t, actors.Config{}, func(t *testing.T, h *actortest.Harness) {
		fake := actortest.NewFakePass(actortest.Fail(fmt.Errorf("purge: %w", core.NewForbiddenError("permission denied for table audit_log"))))
		h.Register(passes.Registration{Name: "p", New: fake.Factory(), Options: options(time.Hour, failingOptions)})
		h.Start()
		r := h.ExpectWithin(time.Second, actortest.Is[actors.PassRestarted]()).(actors.PassRestarted)
		if r.Class != supervisor.Deterministic || r.Backoff != time.Hour {
			t.Fatalf("restart = %+v, want deterministic after the 1h interval", r)
		}
		if st := h.Status("p"); st.State != actors.StateBackoff || !st.NextSweep.Equal(h.Now().Add(time.Hour)) {
			t.Fatalf("status = %+v", st)
		}
		h.ExpectNone(time.Hour-time.Nanosecond, actortest.Is[actors.SweepStarted]())
		h.ExpectWithin(time.Nanosecond, actortest.Is[actors.SweepStarted]())
	})
}

func TestRetryAfterHintIsAFloorOnTheBackoff(t *testing.T) {
	t.Parallel()
	cfg := actors.Config{Supervision: supervisor.Policy{Backoff: supervisor.Backoff{Initial: time.Second, Max: time.Minute}}}
	actortest.Run(t, cfg, func(t *testing.T, h *actortest.Harness) {
		fake := actortest.NewFakePass(
			actortest.RetryAfter(errConnReset, 30*time.Second),   // above the 1s backoff: the hint wins
			actortest.RetryAfter(errConnReset, time.Millisecond), // below the 2s backoff: the backoff wins
			actortest.RetryAfter(errConnReset, 10*time.Hour),     // above the maximum: clamped
		)
		h.Register(passes.Registration{Name: "p", New: fake.Factory(), Options: options(time.Hour, failingOptions)})
		h.Start()
		got := backoffs(h, 3)
		if want := []time.Duration{30 * time.Second, 2 * time.Second, time.Minute}; !slices.Equal(got, want) {
			t.Fatalf("backoffs = %v, want %v", got, want)
		}
	})
}

func TestMaxRestartsStopsThePassDegraded(t *testing.T) {
	t.Parallel()
	cfg := actors.Config{Supervision: supervisor.Policy{Limit: supervisor.Limit{MaxRestarts: 2, Window: time.Hour}}}
	actortest.Run(t, cfg, func(t *testing.T, h *actortest.Harness) {
		fake := actortest.NewFakePass().Otherwise(actortest.Fail(errConnReset))
		healthy := actortest.NewFakePass()
		h.Register(
			passes.Registration{Name: "doomed", New: fake.Factory(), Options: options(time.Hour, failingOptions)},
			passes.Registration{Name: "healthy", New: healthy.Factory(), Options: options(time.Hour, failingOptions)},
		)
		h.Start()
		stopped := h.ExpectWithin(time.Hour, actortest.Is[actors.PassStopped]()).(actors.PassStopped)
		if stopped.Name != "doomed" || !stopped.Degraded || !errors.Is(stopped.Err, errConnReset) {
			t.Fatalf("stopped = %+v", stopped)
		}
		if n := len(fake.Calls()); n != 3 {
			t.Fatalf("calls = %d, want 3 (the first try and two restarts)", n)
		}
		st := h.Runtime.Status()
		if !st.Degraded || h.Status("doomed").State != actors.StateStopped || !h.Status("doomed").Degraded || h.Status("healthy").Degraded {
			t.Fatalf("status = %+v", st)
		}
		h.ExpectNone(3*time.Hour, actortest.Of("doomed", actortest.Is[actors.SweepStarted]()))
		if err := h.Runtime.Trigger("doomed"); err == nil {
			t.Fatal("Trigger of a stopped pass succeeded")
		}
		if len(healthy.Calls()) < 2 {
			t.Fatalf("the healthy pass swept %d times: one pass's failures stopped another", len(healthy.Calls()))
		}
	})
}

func TestAllForOneGroupRestartsEveryMember(t *testing.T) {
	t.Parallel()
	actortest.Run(t, actors.Config{}, func(t *testing.T, h *actortest.Harness) {
		bad := actortest.NewFakePass(actortest.Fail(errConnReset))
		sibling := actortest.NewFakePass()
		loner := actortest.NewFakePass()
		h.Register(
			passes.Registration{Name: "orders", Group: "shop", New: bad.Factory(), Options: options(time.Hour, failingOptions)},
			passes.Registration{Name: "order-lines", Group: "shop", New: sibling.Factory(), Options: options(time.Hour, func(o *passes.Options) {
				o.MaxStartupStagger = 0
			})},
			passes.Registration{Name: "sessions", New: loner.Factory(), Options: options(time.Hour, failingOptions)},
		)
		h.Start()
		h.ExpectWithin(time.Second, actortest.Where(func(e actors.PassFailed) bool { return e.Name == "orders" }))
		restarted := map[string]bool{}
		for range 2 {
			r := h.Expect(actortest.Is[actors.PassRestarted]()).(actors.PassRestarted)
			restarted[r.Name] = true
		}
		if !restarted["orders"] || !restarted["order-lines"] || restarted["sessions"] {
			t.Fatalf("restarted %v, want the whole shop group and nothing else", restarted)
		}
		if h.Status("sessions").Restarts != 0 || h.Status("order-lines").Restarts != 1 {
			t.Fatalf("restarts: sessions %d, order-lines %d", h.Status("sessions").Restarts, h.Status("order-lines").Restarts)
		}
	})
}

func TestResultOfAnEarlierIncarnationIsDropped(t *testing.T) {
	t.Parallel()
	// The sibling's first batch ignores its context and is still running when the group
	// restarts; its late result (7 rows) must not count in the new incarnation.
	actortest.Run(t, actors.Config{}, func(t *testing.T, h *actortest.Harness) {
		first, second, slowRunning := make(chan struct{}), make(chan struct{}), make(chan struct{})
		var calls, badCalls atomic.Int32
		bad := passes.PassFunc(func(context.Context, int, time.Time) (int, error) {
			if badCalls.Add(1) == 1 {
				<-slowRunning // fail only once the sibling's first batch is under way
				return 0, errConnReset
			}
			return 0, nil
		})
		stubborn := passes.PassFunc(func(context.Context, int, time.Time) (int, error) {
			if calls.Add(1) == 1 {
				close(slowRunning)
				<-first
				return 7, nil
			}
			<-second
			return 1, nil
		})
		h.Register(
			passes.Registration{Name: "bad", Group: "g", Target: "t1", New: passes.Reuse(bad), Options: options(time.Hour, failingOptions)},
			passes.Registration{Name: "slow", Group: "g", Target: "t2", New: passes.Reuse(stubborn), Options: options(time.Hour, failingOptions)},
		)
		h.Start()
		h.ExpectWithin(time.Second, actortest.Where(func(e actors.PassRestarted) bool { return e.Name == "slow" }))
		h.Advance(time.Second) // the new incarnation's batch is running now
		close(first)           // the old one returns while the new sweep is in progress
		h.Settle()
		close(second)
		done := h.ExpectWithin(time.Second, actortest.Where(func(e actors.SweepDone) bool { return e.Name == "slow" })).(actors.SweepDone)
		if done.Rows != 1 || done.Batches != 1 {
			t.Fatalf("new incarnation's sweep = %+v, want only its own batch", done)
		}
		if calls.Load() != 2 {
			t.Fatalf("calls = %d, want 2", calls.Load())
		}
		for _, e := range actortest.Filter[actors.BatchDone](h.Probe.Events(), actortest.Of("slow", actortest.Is[actors.BatchDone]())) {
			if e.Rows == 7 {
				t.Fatalf("a result of the old incarnation was counted: %+v", e)
			}
		}
		if st := h.Status("slow"); st.TotalRows != 1 || st.State != actors.StateWaiting {
			t.Fatalf("slow status = %+v", st)
		}
	})
}

func TestReviveStartsAPassSupervisionStopped(t *testing.T) {
	t.Parallel()
	cfg := actors.Config{Supervision: supervisor.Policy{Limit: supervisor.Limit{MaxRestarts: 1, Window: time.Hour}}}
	actortest.Run(t, cfg, func(t *testing.T, h *actortest.Harness) {
		fake := actortest.NewFakePass(actortest.Fail(errConnReset), actortest.Fail(errConnReset)) // then it works
		h.Register(passes.Registration{Name: "p", New: fake.Factory(), Options: options(time.Hour, failingOptions)})
		h.Start()
		if err := h.Runtime.Revive(context.Background(), "p"); err == nil {
			t.Fatal("Revive of a running pass succeeded")
		}
		h.ExpectWithin(time.Minute, actortest.Where(func(e actors.PassStopped) bool { return e.Degraded }))
		if err := h.Runtime.Revive(context.Background(), "p"); err != nil {
			t.Fatal(err)
		}
		// The new actor starts like a new pass: its first sweep after its offset (0 here).
		done := h.ExpectWithin(time.Second, actortest.Where(func(e actors.SweepDone) bool { return e.Reason == actors.Drained })).(actors.SweepDone)
		if st := h.Status("p"); st.Degraded || st.State != actors.StateWaiting || done.Name != "p" {
			t.Fatalf("after Revive: status %+v, sweep %+v", st, done)
		}
		if err := h.Runtime.Trigger("p"); err != nil {
			t.Fatalf("Trigger after Revive: %v", err)
		}
	})
}

func TestConfigurationDriftIsRetriedLoggedOnceAndFlaggedUntilASweepSucceeds(t *testing.T) {
	t.Parallel()
	cfg := actors.Config{Supervision: supervisor.Policy{Limit: supervisor.Limit{MaxRestarts: 2, Window: time.Hour}}}
	actortest.Run(t, cfg, func(t *testing.T, h *actortest.Harness) {
		gone := &passes.SchemaDriftError{Err: errors.New(`relation "audit_log" does not exist`)}
		fake := actortest.NewFakePass()
		for range 6 { // more than MaxRestarts: drift must not count toward it
			fake.Then(actortest.Fail(fmt.Errorf("pass %q: select batch: %w", "audit", gone)))
		}
		fake.Then(actortest.Rows(3))
		other := actortest.NewFakePass().Otherwise(actortest.Rows(1))
		h.Register(
			passes.Registration{Name: "audit", New: fake.Factory(), Options: options(time.Hour, failingOptions)},
			passes.Registration{Name: "other", New: other.Factory(), Options: options(time.Hour, func(o *passes.Options) {
				o.MaxStartupStagger, o.SweepInterval = 0, 10*time.Second
			})},
		)
		h.Start()
		var restarts []actors.PassRestarted
		for range 6 {
			restarts = append(restarts, h.ExpectWithin(time.Hour, actortest.Of("audit", actortest.Is[actors.PassRestarted]())).(actors.PassRestarted))
		}
		for _, r := range restarts {
			if r.Class != supervisor.Drift {
				t.Fatalf("restart class %v, want drift", r.Class)
			}
		}
		st := h.Status("audit")
		if !st.Drift || !strings.Contains(st.DriftError, `relation "audit_log" does not exist`) || st.Degraded || !h.Runtime.Status().Drift {
			t.Fatalf("status in drift = %+v", st)
		}
		if n := h.Status("other").Sweeps; n < 3 {
			t.Fatalf("the other pass swept %d times during the drift: it must keep going", n)
		}
		auditLines := func(level string) int {
			n := 0
			for _, line := range strings.Split(h.Logs.String(), "\n") {
				if strings.Contains(line, "pass=audit") && strings.Contains(line, "level="+level) {
					n++
				}
			}
			return n
		}
		if w, i := auditLines("warning"), auditLines("info"); w != 6 || i != 2 { // the first start and sweep start
			t.Fatalf("%d warnings and %d info lines for 6 drift failures, want one warning each and no info line after the first sweep started:\n%s", w, i, h.Logs.String())
		}
		done := h.ExpectWithin(time.Hour, actortest.Of("audit", actortest.Is[actors.SweepDone]())).(actors.SweepDone)
		for done.Reason == actors.Failed {
			done = h.ExpectWithin(time.Hour, actortest.Of("audit", actortest.Is[actors.SweepDone]())).(actors.SweepDone)
		}
		if st := h.Status("audit"); done.Reason != actors.Drained || st.Drift || st.DriftError != "" || h.Runtime.Status().Drift {
			t.Fatalf("after the table came back: sweep %+v, status %+v", done, st)
		}
		if !strings.Contains(h.Logs.String(), "configuration drift cleared") {
			t.Fatalf("no line says the drift cleared:\n%s", h.Logs.String())
		}
	})
}
