package polling_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/retentionkit/retention/core"
	"github.com/retentionkit/retention/core/clock"
	"github.com/retentionkit/retention/core/polling"
)

// recorder is a Reporter that keeps what it was told.
type recorder struct {
	mu        sync.Mutex
	failed    []error
	cancelled int
	stopping  int
}

func (r *recorder) PassFailed(err error) {
	r.mu.Lock()
	r.failed = append(r.failed, err)
	r.mu.Unlock()
}
func (r *recorder) PassCancelled() { r.mu.Lock(); r.cancelled++; r.mu.Unlock() }
func (r *recorder) Stopping()      { r.mu.Lock(); r.stopping++; r.mu.Unlock() }

// script runs the given pass results in order; after the last it stops the loop.
type script struct {
	steps []func(ctx context.Context) (polling.Outcome, error)
	calls int
	stop  context.CancelFunc
	clk   *clock.Manual
	times []time.Time
}

func (s *script) pass(ctx context.Context) (polling.Outcome, error) {
	s.times = append(s.times, s.clk.Now())
	if s.calls == len(s.steps) {
		s.stop()
		return polling.WaitForInterval, ctx.Err()
	}
	step := s.steps[s.calls]
	s.calls++
	return step(ctx)
}

func ret(o polling.Outcome, err error) func(context.Context) (polling.Outcome, error) {
	return func(context.Context) (polling.Outcome, error) { return o, err }
}

// runScript runs a loop over steps on a manual clock, advancing the clock whenever the
// loop waits, and returns what the reporter heard and when each pass started.
func runScript(t *testing.T, interval time.Duration, steps ...func(context.Context) (polling.Outcome, error)) (*recorder, []time.Duration) {
	t.Helper()
	clk := clock.NewManual(time.Unix(0, 0))
	stop, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := &script{steps: steps, stop: cancel, clk: clk}
	rep := &recorder{}
	done := make(chan struct{})
	go func() {
		polling.Loop{Pass: s.pass, Reporter: rep, Interval: interval, Clock: clk}.Run(stop)
		close(done)
	}()
	for {
		waiting := make(chan error, 1)
		go func() { waiting <- clk.WaitPending(stop, 1) }()
		select {
		case <-done:
			var offsets []time.Duration
			for _, at := range s.times {
				offsets = append(offsets, at.Sub(time.Unix(0, 0)))
			}
			return rep, offsets
		case err := <-waiting:
			if err == nil {
				clk.Advance(interval)
			}
		}
	}
}

func TestLoop(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	joined := errors.Join(errors.New("first"), errors.New("second"))
	tests := []struct {
		name          string
		steps         []func(context.Context) (polling.Outcome, error)
		wantFailed    []error
		wantCancelled int
		wantStarts    []time.Duration
	}{
		{
			name:       "wait for interval waits on the clock",
			steps:      []func(context.Context) (polling.Outcome, error){ret(polling.WaitForInterval, nil), ret(polling.WaitForInterval, nil)},
			wantStarts: []time.Duration{0, time.Minute, 2 * time.Minute},
		},
		{
			name:       "poll again starts the next pass at once",
			steps:      []func(context.Context) (polling.Outcome, error){ret(polling.PollAgain, nil), ret(polling.PollAgain, nil), ret(polling.WaitForInterval, nil)},
			wantStarts: []time.Duration{0, 0, 0, time.Minute},
		},
		{
			name:       "a failed pass is reported and the loop goes on after the interval",
			steps:      []func(context.Context) (polling.Outcome, error){ret(polling.PollAgain, boom)},
			wantFailed: []error{boom},
			wantStarts: []time.Duration{0, time.Minute},
		},
		{
			name:       "a joined error is reported whole",
			steps:      []func(context.Context) (polling.Outcome, error){ret(polling.WaitForInterval, joined)},
			wantFailed: []error{joined},
			wantStarts: []time.Duration{0, time.Minute},
		},
		{
			name:          "a timeout inside a pass is a cancellation, not a stop",
			steps:         []func(context.Context) (polling.Outcome, error){ret(polling.WaitForInterval, fmt.Errorf("query: %w", context.DeadlineExceeded)), ret(polling.WaitForInterval, context.Canceled)},
			wantCancelled: 2,
			wantStarts:    []time.Duration{0, time.Minute, 2 * time.Minute},
		},
		{
			name:       "a real failure joined with a timeout is a failure",
			steps:      []func(context.Context) (polling.Outcome, error){ret(polling.WaitForInterval, errors.Join(boom, context.DeadlineExceeded))},
			wantFailed: []error{errors.Join(boom, context.DeadlineExceeded)},
			wantStarts: []time.Duration{0, time.Minute},
		},
		{
			name: "a panicking pass is reported as failed",
			steps: []func(context.Context) (polling.Outcome, error){func(context.Context) (polling.Outcome, error) {
				panic(boom)
			}},
			wantFailed: []error{&core.PanicError{Value: boom}},
			wantStarts: []time.Duration{0, time.Minute},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rep, starts := runScript(t, time.Minute, tc.steps...)
			if fmt.Sprint(starts) != fmt.Sprint(tc.wantStarts) {
				t.Errorf("passes started at %v, want %v", starts, tc.wantStarts)
			}
			if len(rep.failed) != len(tc.wantFailed) {
				t.Fatalf("failed = %v, want %v", rep.failed, tc.wantFailed)
			}
			for i, err := range rep.failed {
				if err.Error() != tc.wantFailed[i].Error() {
					t.Errorf("failure %d = %q, want %q", i, err, tc.wantFailed[i])
				}
			}
			if rep.cancelled != tc.wantCancelled {
				t.Errorf("cancelled = %d, want %d", rep.cancelled, tc.wantCancelled)
			}
			if rep.stopping != 1 {
				t.Errorf("stopping = %d, want 1", rep.stopping)
			}
		})
	}
}

func TestLoopReportsTheSameErrorValue(t *testing.T) {
	t.Parallel()
	joined := errors.Join(errors.New("a"), errors.New("b"))
	rep, _ := runScript(t, time.Second, ret(polling.WaitForInterval, joined))
	if len(rep.failed) != 1 || rep.failed[0] != joined {
		t.Fatalf("reported %v, want the joined error itself", rep.failed)
	}
	var p *core.PanicError
	rep, _ = runScript(t, time.Second, func(context.Context) (polling.Outcome, error) { panic("text") })
	if !errors.As(rep.failed[0], &p) || p.Value != "text" {
		t.Fatalf("panic reported as %v", rep.failed[0])
	}
}

func TestLoopStopsOnlyOnStop(t *testing.T) {
	t.Parallel()
	t.Run("stop during a wait ends the loop", func(t *testing.T) {
		clk := clock.NewManual(time.Unix(0, 0))
		stop, cancel := context.WithCancel(context.Background())
		rep := &recorder{}
		done := make(chan struct{})
		passes := 0
		go func() {
			polling.Loop{Pass: func(context.Context) (polling.Outcome, error) { passes++; return polling.WaitForInterval, nil }, Reporter: rep, Interval: time.Hour, Clock: clk}.Run(stop)
			close(done)
		}()
		if err := clk.WaitPending(context.Background(), 1); err != nil {
			t.Fatal(err)
		}
		cancel()
		<-done
		if passes != 1 || rep.stopping != 1 || len(rep.failed) != 0 || rep.cancelled != 0 {
			t.Fatalf("passes %d, stopping %d, failed %v, cancelled %d", passes, rep.stopping, rep.failed, rep.cancelled)
		}
		if clk.Pending() != 0 {
			t.Fatalf("the loop left %d timers behind", clk.Pending())
		}
	})
	t.Run("a pass ended by the stop is not reported", func(t *testing.T) {
		stop, cancel := context.WithCancel(context.Background())
		rep := &recorder{}
		polling.Loop{Pass: func(ctx context.Context) (polling.Outcome, error) {
			cancel()
			return polling.WaitForInterval, ctx.Err()
		}, Reporter: rep}.Run(stop)
		if rep.cancelled != 0 || len(rep.failed) != 0 || rep.stopping != 1 {
			t.Fatalf("cancelled %d, failed %v, stopping %d", rep.cancelled, rep.failed, rep.stopping)
		}
	})
	t.Run("a nil reporter is fine", func(t *testing.T) {
		stop, cancel := context.WithCancel(context.Background())
		polling.Loop{Pass: func(context.Context) (polling.Outcome, error) { cancel(); return 0, errors.New("x") }}.Run(stop)
	})
}
