// Package observers keeps an observer from breaking the operation it observes. A
// Composite tells many observers of one event, in order; a Guard contains whatever one
// of them does wrong (an error or a panic), counts it, and hands it to a FailureReporter.
package observers

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/retentionkit/retention/core"
)

// FailureReporter hears of each observer failure a Guard contained. The observer is the
// value that failed, so a reporter can name its type.
type FailureReporter interface {
	ObserverFailed(observer any, err error)
}

// Guard runs observer calls and contains their failures. Failures is raised before the
// reporter hears of one, and a reporter that panics is contained too and counted in
// ReporterFailures, so a host can tell failures that were counted but never reported.
//
// The zero value is usable and reports to nobody. A Guard is safe for concurrent use.
type Guard struct {
	// Reporter hears of each contained failure; nil means nobody does.
	Reporter FailureReporter

	failures         atomic.Int64
	reporterFailures atomic.Int64
}

// NewGuard returns a guard reporting to r.
func NewGuard(r FailureReporter) *Guard { return &Guard{Reporter: r} }

// Failures returns how many observer calls failed.
func (g *Guard) Failures() int64 { return g.failures.Load() }

// ReporterFailures returns how many times the reporter itself failed.
func (g *Guard) ReporterFailures() int64 { return g.reporterFailures.Load() }

// Run calls f for observer and contains an error it returns or a panic it raises.
func (g *Guard) Run(observer any, f func() error) {
	if err := call(f); err != nil {
		g.fail(observer, err)
	}
}

// RunContext calls f for observer with the operation's context. A failure is contained,
// except when ctx has ended and the failure is that ending: the operation is being
// cancelled, which is not the observer's fault, so ctx's error is returned for the
// caller to propagate. An observer that fails with a cancellation of its own making,
// while ctx is still live, is an ordinary failure.
func (g *Guard) RunContext(ctx context.Context, observer any, f func(ctx context.Context) error) error {
	err := call(func() error { return f(ctx) })
	if err == nil {
		return nil
	}
	if ctxErr := ctx.Err(); ctxErr != nil && errors.Is(err, ctxErr) {
		return ctxErr
	}
	g.fail(observer, err)
	return nil
}

func (g *Guard) fail(observer any, err error) {
	g.failures.Add(1)
	if g.Reporter == nil {
		return
	}
	if rerr := call(func() error { g.Reporter.ObserverFailed(observer, err); return nil }); rerr != nil {
		g.reporterFailures.Add(1)
	}
}

// call runs f and turns a panic into a *core.PanicError.
func call(f func() error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &core.PanicError{Value: v}
		}
	}()
	return f()
}
