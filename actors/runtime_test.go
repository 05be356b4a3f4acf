package actors_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/actors/actortest"
	"github.com/retentionkit/retention/core"
	"github.com/retentionkit/retention/passes"
)

func TestGracefulStopLetsTheInFlightBatchFinish(t *testing.T) {
	t.Parallel()
	actortest.Run(t, actors.Config{}, func(t *testing.T, h *actortest.Harness) {
		fake := actortest.NewFakePass(actortest.Block(500)).Otherwise(actortest.Rows(500))
		h.Register(passes.Registration{Name: "p", New: fake.Factory(), Options: options(time.Hour, func(o *passes.Options) {
			o.MaxStartupStagger = 0
		})})
		h.Start()
		stopped := make(chan error, 1)
		go func() { stopped <- h.Stop(context.Background()) }()
		h.Settle()
		select {
		case err := <-stopped:
			t.Fatalf("Stop returned (%v) while a batch was in flight", err)
		default:
		}
		fake.Release()
		if err := <-stopped; err != nil {
			t.Fatalf("Stop = %v", err)
		}
		if n := len(fake.Calls()); n != 1 {
			t.Fatalf("calls = %d: a batch started after the stop was asked", n)
		}
		done := actortest.Filter[actors.SweepDone](h.Probe.Events(), actortest.Is[actors.SweepDone]())
		if len(done) != 1 || done[0].Reason != actors.Stopped || done[0].Rows != 500 {
			t.Fatalf("sweep done = %+v, want the finished batch counted and reason stopped", done)
		}
		st := actortest.Filter[actors.PassStopped](h.Probe.Events(), actortest.Is[actors.PassStopped]())
		if len(st) != 1 || st[0].Degraded {
			t.Fatalf("pass stopped = %+v", st)
		}
		if s := h.Runtime.Status(); s.Passes[0].State != actors.StateStopped || s.Slots[passes.DefaultDatabase].InUse != 0 {
			t.Fatalf("status after stop = %+v", s)
		}
	})
}

func TestStopPastTheGracePeriodCancelsTheBatch(t *testing.T) {
	t.Parallel()
	actortest.Run(t, actors.Config{}, func(t *testing.T, h *actortest.Harness) {
		fake := actortest.NewFakePass(actortest.Block(500))
		h.Register(passes.Registration{Name: "p", New: fake.Factory(), Options: options(time.Hour, func(o *passes.Options) {
			o.MaxStartupStagger, o.BatchTimeout = 0, 0
		})})
		h.Start()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // bubble time
		defer cancel()
		err := h.Stop(ctx)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Stop = %v, want the grace period's deadline", err)
		}
		done := actortest.Filter[actors.SweepDone](h.Probe.Events(), actortest.Is[actors.SweepDone]())
		if len(done) != 1 || done[0].Reason != actors.Stopped || done[0].Rows != 0 {
			t.Fatalf("sweep done = %+v, want the cancelled batch not counted", done)
		}
		if failed := actortest.Filter[actors.PassFailed](h.Probe.Events(), actortest.Is[actors.PassFailed]()); len(failed) != 0 {
			t.Fatalf("a stop was reported as a failure: %+v", failed)
		}
	})
}

func TestStartValidatesEveryPassAndNamesEachProblem(t *testing.T) {
	t.Parallel()
	actortest.Run(t, actors.Config{}, func(t *testing.T, h *actortest.Harness) {
		bad := options(time.Hour, func(o *passes.Options) { o.BatchSize, o.SweepInterval = 0, -time.Second })
		h.Register(
			passes.Registration{Name: "audit-log", New: actortest.NewFakePass().Factory(), Options: bad},
			passes.Registration{Name: "sessions", Options: options(-time.Hour)},
		)
		err := h.Runtime.Start(context.Background())
		if err == nil {
			t.Fatal("Start accepted invalid passes")
		}
		msg := err.Error()
		for _, want := range []string{`pass "audit-log": batch_size`, `pass "audit-log": sweep_interval`, `pass "sessions": retention_period`, `pass "sessions": new`} {
			if !strings.Contains(msg, want) {
				t.Errorf("error lacks %q:\n%s", want, msg)
			}
		}
		var ve *core.ValidationError
		if !errors.As(err, &ve) {
			t.Fatalf("error is not a validation error: %v", err)
		}
	})
}

func TestRegisterRefusesADuplicateName(t *testing.T) {
	t.Parallel()
	actortest.Run(t, actors.Config{}, func(t *testing.T, h *actortest.Harness) {
		reg := passes.Registration{Name: "p", New: actortest.NewFakePass().Factory(), Options: options(time.Hour)}
		h.Register(reg)
		err := h.Runtime.Register(reg)
		var dup *passes.DuplicateNameError
		if !errors.As(err, &dup) || dup.Name != "p" || core.ErrorCode(err) != core.CodeConflict {
			t.Fatalf("second Register = %v", err)
		}
	})
}

func TestThousandPassesSpreadTheirFirstSweepOverTheStagger(t *testing.T) {
	t.Parallel()
	actortest.Run(t, actors.Config{MaxConcurrentDeletes: 1000}, func(t *testing.T, h *actortest.Harness) {
		fake := actortest.NewFakePass()
		for i := range 1000 {
			h.Register(passes.Registration{Name: "pass-" + strconv.Itoa(i), New: fake.Factory(), Options: options(time.Hour)})
		}
		h.Start()
		buckets := make([]int, 6) // 10-second buckets of the first minute
		h.Advance(time.Minute)
		for _, e := range actortest.Filter[actors.SweepStarted](h.Probe.Events(), actortest.Is[actors.SweepStarted]()) {
			at := e.Cutoff.Add(time.Hour).Sub(actortest.Epoch)
			if at < 0 || at >= time.Minute {
				t.Fatalf("pass %s swept at %v, outside the 1m stagger", e.Name, at)
			}
			buckets[at/(10*time.Second)]++
		}
		total := 0
		for i, n := range buckets {
			total += n
			if n < 120 || n > 220 {
				t.Errorf("bucket %d (%ds..%ds) has %d first sweeps, want about 167", i, i*10, i*10+10, n)
			}
		}
		if total != 1000 {
			t.Fatalf("%d of 1000 passes swept in the first minute", total)
		}
	})
}
