package supervisor

import (
	"errors"
	"fmt"
	"time"

	"github.com/retentionkit/retention/core"
	"github.com/retentionkit/retention/core/retry"
)

// IsDrift reports whether reason, a value a pass actor failed with, is configuration
// drift, which the strategies retry without counting it toward the restart limit.
func IsDrift(reason any) bool {
	err, ok := reason.(error)
	return ok && core.IsSchemaDrift(err)
}

// Class is how Decide classified a failure.
type Class int

const (
	// Transient is an unclassified error: a timeout, a lost connection. Backoff applies.
	Transient Class = iota
	// Deterministic is one of core's five error types: retrying sooner than the normal
	// interval would fail the same way.
	Deterministic
	// RetryAfter carries a retry.After hint, a floor on the backoff.
	RetryAfter
	// Panic is a panic in the pass or in the runtime. Backoff applies.
	Panic
	// Drift is configuration drift (core.IsSchemaDrift): a table or column the pass
	// was configured with is not there. Retrying soon cannot help, yet the pass works
	// again once it is back, so it is retried on the backoff, never later than the
	// interval, and never counts toward the restart limit: the pass is not given up on.
	Drift
)

func (c Class) String() string {
	switch c {
	case Transient:
		return "transient"
	case Deterministic:
		return "deterministic"
	case RetryAfter:
		return "retry-after"
	case Panic:
		return "panic"
	case Drift:
		return "drift"
	default:
		return fmt.Sprintf("Class(%d)", int(c))
	}
}

// Decision is what to do about one failure: restart after Delay.
type Decision struct {
	Class Class
	Delay time.Duration
}

// Decide classifies reason (the value the pass actor panicked with) and returns the
// delay before the restart. attempt counts the failures since the last good sweep,
// starting at 1; interval is the pass's normal interval.
//
//   - configuration drift (core.IsSchemaDrift): the backoff, never above the interval;
//   - deterministic (core.IsDeterministic): the normal interval, never sooner;
//   - a retry.After hint: the backoff, raised to the hint and clamped to b.Max; a hint
//     without a delay ("not now") is the plain backoff;
//   - a panic (a *core.PanicError, or a value that is not an error): the backoff;
//   - anything else: the backoff.
func Decide(reason any, attempt int, interval time.Duration, b Backoff) Decision {
	err, isErr := reason.(error)
	backoff := b.Delay(attempt)
	var p *core.PanicError
	switch {
	case !isErr:
		return Decision{Class: Panic, Delay: backoff}
	case core.IsSchemaDrift(err):
		return Decision{Class: Drift, Delay: min(backoff, max(interval, b.withDefaults().Initial))}
	case core.IsDeterministic(err):
		return Decision{Class: Deterministic, Delay: max(interval, backoff)}
	case errors.As(err, &p):
		return Decision{Class: Panic, Delay: backoff}
	}
	if a, ok := retry.AfterOf(err); ok {
		if hint, has := a.RetryAfter(); has {
			backoff = min(max(backoff, hint), b.withDefaults().Max)
		}
		return Decision{Class: RetryAfter, Delay: backoff}
	}
	return Decision{Class: Transient, Delay: backoff}
}
