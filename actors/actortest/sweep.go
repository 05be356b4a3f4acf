package actortest

import (
	"context"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/passes"
)

// SweepOnce registers reg on a real Runtime built from cfg, triggers one sweep, waits for
// it to end, stops the runtime and returns the sweep's SweepDone with every event heard
// (in order, up to the stop). It is for passes that talk to a database, which do not
// belong in a synctest bubble (their I/O takes real time while the bubble's clock is
// fake), so the runtime runs outside one, on real goroutines.
//
// A nil cfg.Clock becomes NewClock(): time stands still at Epoch, so the sweep's cutoff
// is exactly SweepCutoff(reg.Options) and a fixture seeded around it is split at the
// same instant the pass deletes at. The stagger and interval timers never fire on a
// clock nobody advances, so the sweep is the one SweepOnce triggers; for the same
// reason reg.Options.BatchDelay must be 0 (test pacing on the Harness). A nil
// cfg.Logger logs into a buffer the test's log shows if it fails.
//
// The sweep ends however the pass makes it end (drained, batch limit, failed,
// cancelled); a failed sweep is restarted by supervision, and the restarted pass waits
// its backoff on the standing clock, so nothing sweeps after it. The wait is bounded by
// SweepTimeout on the wall clock, so a pass that hangs fails the test instead of
// hanging it.
func SweepOnce(t testing.TB, cfg actors.Config, reg passes.Registration) (actors.SweepDone, []actors.Event) {
	t.Helper()
	if reg.Options.BatchDelay > 0 {
		t.Fatalf("SweepOnce %s: BatchDelay is %v, but the clock stands still: set it to 0 (pacing is tested on the Harness)", reg.Name, reg.Options.BatchDelay)
		return actors.SweepDone{}, nil
	}
	if cfg.Clock == nil {
		cfg.Clock = NewClock()
	}
	if cfg.Logger == nil {
		logs := &SyncBuffer{}
		logger := logrus.New()
		logger.SetOutput(logs)
		logger.SetLevel(logrus.DebugLevel)
		cfg.Logger = logger
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("runtime log:\n%s", logs)
			}
		})
	}
	probe := &Probe{}
	done := make(chan actors.SweepDone, 1)
	cfg.Observers = append([]actors.Observer{probe, actors.ObserverFunc(func(e actors.Event) error {
		if d, ok := e.(actors.SweepDone); ok && d.Name == reg.Name {
			select {
			case done <- d:
			default:
			}
		}
		return nil
	})}, cfg.Observers...)
	rt := actors.New(cfg)
	if err := rt.Register(reg); err != nil {
		t.Fatalf("SweepOnce: register: %v", err)
		return actors.SweepDone{}, nil
	}
	if err := rt.Start(context.Background()); err != nil {
		t.Fatalf("SweepOnce: start: %v", err)
		return actors.SweepDone{}, nil
	}
	stop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), StopGrace)
		defer cancel()
		if err := rt.Stop(ctx); err != nil {
			t.Logf("SweepOnce: stop: %v", err)
		}
	}
	if err := rt.Trigger(reg.Name); err != nil {
		stop()
		t.Fatalf("SweepOnce: trigger: %v", err)
		return actors.SweepDone{}, nil
	}
	select {
	case d := <-done:
		stop()
		return d, probe.Events()
	case <-time.After(SweepTimeout): // a bound on a hang, not a timing assertion
		stop()
		t.Fatalf("SweepOnce %s: the sweep did not end within %v; events:\n%s", reg.Name, SweepTimeout, describe(probe.Events()))
		return actors.SweepDone{}, nil
	}
}

// SweepTimeout bounds, on the wall clock, how long SweepOnce waits for its sweep.
const SweepTimeout = time.Minute

// SweepCutoff is the cutoff of a sweep that starts at Epoch with opts: Epoch minus the
// retention period (Epoch itself when there is none). Seed a fixture around it.
func SweepCutoff(opts passes.Options) time.Time {
	if opts.RetentionPeriod == nil {
		return Epoch
	}
	return opts.Cutoff(Epoch)
}
