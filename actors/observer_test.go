package actors_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/actors/actortest"
	"github.com/retentionkit/retention/passes"
)

func TestFailingAndBlockingObserversDoNotDelayAPass(t *testing.T) {
	t.Parallel()
	var unblock chan struct{} // made inside the bubble, so a wait on it is durably blocked
	blocking := actors.ObserverFunc(func(e actors.Event) error {
		if _, ok := e.(actors.SweepDone); ok {
			<-unblock // stuck until the test lets go
		}
		return nil
	})
	panicking := actors.ObserverFunc(func(actors.Event) error { panic("observer bug") })
	failing := actors.ObserverFunc(func(actors.Event) error { return errors.New("disk full") })
	cfg := actors.Config{Observers: []actors.Observer{panicking, failing, blocking}}
	actortest.Run(t, cfg, func(t *testing.T, h *actortest.Harness) {
		unblock = make(chan struct{})
		fake := actortest.NewFakePass()
		h.Register(passes.Registration{Name: "p", New: fake.Factory(), Options: options(10*time.Minute, func(o *passes.Options) {
			o.MaxStartupStagger = 0
		})})
		h.Start()
		h.Advance(time.Hour)
		if n := len(fake.Calls()); n != 7 {
			t.Fatalf("the pass swept %d times in an hour, want 7 (every 10m): an observer held it up", n)
		}
		if st := h.Status("p"); st.Sweeps != 7 || st.TotalRows != 0 {
			t.Fatalf("status = %+v", st)
		}
		failures, _ := h.Runtime.ObserverFailures()
		if failures == 0 {
			t.Fatal("the failing observers were not counted")
		}
		if !strings.Contains(h.Logs.String(), "observer failed") {
			t.Fatalf("observer failures were not logged:\n%s", h.Logs.String())
		}
		close(unblock)
	})
}

func TestObserversHearEventsInOrder(t *testing.T) {
	t.Parallel()
	actortest.Run(t, actors.Config{}, func(t *testing.T, h *actortest.Harness) {
		fake := actortest.NewFakePass(actortest.Rows(2), actortest.Rows(1))
		h.Register(passes.Registration{Name: "p", New: fake.Factory(), Options: options(time.Hour, func(o *passes.Options) {
			o.BatchSize, o.MaxStartupStagger = 2, 0
		})})
		h.Start()
		h.ExpectWithin(time.Second, actortest.Is[actors.SweepDone]())
		var kinds []string
		for _, e := range h.Probe.Events() {
			kinds = append(kinds, strings.TrimPrefix(strings.TrimPrefix(typeName(e), "actors."), "*"))
		}
		want := "PassStarted SweepStarted BatchDone BatchDone SweepDone"
		if got := strings.Join(kinds, " "); got != want {
			t.Fatalf("events = %s, want %s", got, want)
		}
		if !strings.Contains(h.Logs.String(), "sweep done") {
			t.Fatalf("the log observer wrote nothing:\n%s", h.Logs.String())
		}
	})
}

func TestRowSkippedReachesObservers(t *testing.T) {
	t.Parallel()
	actortest.Run(t, actors.Config{}, func(t *testing.T, h *actortest.Harness) {
		skipping := passes.PassFunc(func(ctx context.Context, _ int, _ time.Time) (int, error) {
			passes.ReportSkipped(ctx, 42, errors.New("violates foreign key"))
			return 3, nil
		})
		h.Register(passes.Registration{Name: "p", New: passes.Reuse(skipping), Options: options(time.Hour, func(o *passes.Options) {
			o.MaxStartupStagger = 0
		})})
		h.Start()
		skip := h.ExpectWithin(time.Second, actortest.Is[actors.RowSkipped]()).(actors.RowSkipped)
		done := h.Expect(actortest.Is[actors.SweepDone]()).(actors.SweepDone)
		if skip.Key != 42 || done.Skipped != 1 || done.Rows != 3 || h.Status("p").TotalSkipped != 1 {
			t.Fatalf("skip %+v, done %+v", skip, done)
		}
	})
}

func typeName(v any) string { return fmt.Sprintf("%T", v) }

func TestSkippedRowsAndMoreWaitingKeepTheSweepGoing(t *testing.T) {
	t.Parallel()
	actortest.Run(t, actors.Config{}, func(t *testing.T, h *actortest.Harness) {
		calls := 0
		pass := passes.PassFunc(func(ctx context.Context, size int, _ time.Time) (int, error) {
			calls++
			switch calls {
			case 1: // one row skipped, the rest deleted: full
				passes.ReportSkipped(ctx, "k1", errors.New("held"))
				return size - 1, nil
			case 2: // nothing deleted, but another sweeper took the batch: go on
				passes.ReportMoreWaiting(ctx)
				return 0, nil
			default:
				return 1, nil
			}
		})
		h.Register(passes.Registration{Name: "p", New: passes.Reuse(pass), Options: options(time.Hour, func(o *passes.Options) {
			o.BatchSize, o.MaxStartupStagger = 4, 0
		})})
		h.Start()
		done := h.ExpectWithin(time.Second, actortest.Is[actors.SweepDone]()).(actors.SweepDone)
		if done.Batches != 3 || done.Rows != 4 || done.Skipped != 1 || done.Reason != actors.Drained {
			t.Fatalf("sweep = %+v, want 3 batches, 4 rows, 1 skipped", done)
		}
	})
}
