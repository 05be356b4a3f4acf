// Package polling runs a unit of work over and over until the host asks it to stop. It
// exists for one guarantee: only the stop context ends the loop. A pass that fails, or
// that ends cancelled while nobody asked to stop (a database statement that timed out),
// is reported and the loop carries on, so a service never goes quiet while its host
// still looks healthy.
package polling

import (
	"context"
	"errors"
	"time"

	"github.com/retentionkit/retention/core"
	"github.com/retentionkit/retention/core/clock"
)

// Outcome is what a pass tells the loop about the work that remains.
type Outcome int

const (
	// WaitForInterval waits the loop's interval before the next pass: the usual answer of
	// work on a fixed cadence.
	WaitForInterval Outcome = iota
	// PollAgain starts the next pass at once: the answer of a pass that filled a whole
	// batch and knows more is waiting.
	PollAgain
)

func (o Outcome) String() string {
	switch o {
	case WaitForInterval:
		return "WaitForInterval"
	case PollAgain:
		return "PollAgain"
	default:
		return "Outcome(?)"
	}
}

// Reporter hears how passes ended. The loop holds no logger: each service says these
// things in its own words and at its own level.
type Reporter interface {
	// PassFailed is told the error a pass returned, exactly as returned (an errors.Join
	// stays whole), or a *core.PanicError for a pass that panicked.
	PassFailed(err error)
	// PassCancelled is told that a pass ended with a context error while no stop was
	// asked: a timeout inside the pass, not a shutdown.
	PassCancelled()
	// Stopping is told once, when the stop context has ended and the loop returns.
	Stopping()
}

// Loop runs Pass until the stop context passed to Run ends.
//
// The zero value of every field but Pass is usable: a nil Reporter hears nothing, a zero
// Interval polls again at once after WaitForInterval, and a nil Clock is the wall clock.
type Loop struct {
	// Pass is one unit of work. It receives the stop context.
	Pass func(ctx context.Context) (Outcome, error)
	// Reporter is told of failed and cancelled passes and of the loop stopping.
	Reporter Reporter
	// Interval is the wait after a pass that returned WaitForInterval or failed.
	Interval time.Duration
	// Clock times the waits; nil means the wall clock.
	Clock clock.Clock
}

// Run runs passes until stop ends, then tells the reporter it is stopping and returns.
func (l Loop) Run(stop context.Context) {
	clk := clock.OrReal(l.Clock)
	for stop.Err() == nil {
		outcome, err := l.runPass(stop)
		if stop.Err() != nil {
			break
		}
		switch {
		case err == nil && outcome == PollAgain:
			continue
		case err == nil:
		case isContextError(err):
			l.report(func(r Reporter) { r.PassCancelled() })
		default:
			l.report(func(r Reporter) { r.PassFailed(err) })
		}
		wait(stop, clk, l.Interval)
	}
	l.report(func(r Reporter) { r.Stopping() })
}

// runPass calls the pass, turning a panic into a failure so nothing a pass does can end
// the loop.
func (l Loop) runPass(ctx context.Context) (outcome Outcome, err error) {
	defer func() {
		if v := recover(); v != nil {
			outcome, err = WaitForInterval, &core.PanicError{Value: v}
		}
	}()
	return l.Pass(ctx)
}

func (l Loop) report(f func(Reporter)) {
	if l.Reporter != nil {
		f(l.Reporter)
	}
}

// isContextError reports whether err says only that a context ended. A joined error
// counts only when every error it joins does, so a real failure reported alongside a
// timeout is never mistaken for a mere cancellation.
func isContextError(err error) bool {
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		errs := joined.Unwrap()
		for _, e := range errs {
			if !isContextError(e) {
				return false
			}
		}
		return len(errs) > 0
	}
	if err == context.Canceled || err == context.DeadlineExceeded {
		return true
	}
	if inner := errors.Unwrap(err); inner != nil {
		return isContextError(inner)
	}
	return false
}

// wait blocks for d on clk, or until stop ends.
func wait(stop context.Context, clk clock.Clock, d time.Duration) {
	if d <= 0 {
		return
	}
	done := make(chan struct{})
	t := clk.AfterFunc(d, func() { close(done) })
	defer t.Stop()
	select {
	case <-done:
	case <-stop.Done():
	}
}
