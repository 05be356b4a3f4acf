// Package clock is the time source every timer in retention goes through, so a test can
// replace wall time with a Manual clock and move it forward by hand: a sweep's cutoff,
// its batch delay, a backoff and a startup stagger are then exact and instant to test.
package clock

import "time"

// Clock tells the time and schedules callbacks. Implementations must be safe for
// concurrent use.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// AfterFunc arranges for f to be called once d has passed on this clock and returns
	// a Timer that can cancel the call. The wall clock calls f on a goroutine of its own,
	// a Manual clock on the goroutine that advances it, so f must not block for long.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a scheduled callback.
type Timer interface {
	// Stop cancels the callback. It reports whether the call was prevented, which is
	// false when the callback already ran or was stopped before.
	Stop() bool
}

// Real returns the wall clock, backed by the time package.
func Real() Clock { return realClock{} }

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

// OrReal returns c, or the wall clock when c is nil, so a struct with a nil Clock field
// works as its zero value.
func OrReal(c Clock) Clock {
	if c == nil {
		return Real()
	}
	return c
}
