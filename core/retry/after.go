// Package retry lets code that has been told to wait say so by returning an error,
// instead of sleeping where it stands and holding up whatever it shares a worker with.
// Whoever owns the retry (in retention, the supervisor) reads the wait off the failure.
package retry

import (
	"errors"
	"time"
)

// After is implemented by an error that asks to be tried again later.
//
// RetryAfter returns the delay asked for and true, or false for "not now, and no word on
// when": a throttled answer without a delay header is such a case, and it is not the
// same as a delay of zero.
type After interface {
	RetryAfter() (time.Duration, bool)
}

// AfterError is the ready-made After: it wraps the error that caused the wait.
type AfterError struct {
	// Err is the underlying failure; it may be nil.
	Err error
	// Delay is the wait asked for; it means something only when HasDelay is true.
	Delay time.Duration
	// HasDelay tells a hinted wait (even of zero) from no hint at all.
	HasDelay bool
}

// Later returns an AfterError asking for a wait of d. A negative d is taken as zero.
func Later(err error, d time.Duration) *AfterError {
	return &AfterError{Err: err, Delay: max(d, 0), HasDelay: true}
}

// NotNow returns an AfterError that asks for a later attempt without saying when.
func NotNow(err error) *AfterError { return &AfterError{Err: err} }

func (e *AfterError) Error() string {
	msg := "retry later"
	if e.HasDelay {
		msg = "retry after " + e.Delay.String()
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the underlying failure.
func (e *AfterError) Unwrap() error { return e.Err }

// RetryAfter returns the delay asked for, and whether there was one.
func (e *AfterError) RetryAfter() (time.Duration, bool) { return e.Delay, e.HasDelay }

// AfterOf finds the first error in err's chain that implements After, through any
// fmt.Errorf("%w") or errors.Join wrapping. ok is false when none does.
func AfterOf(err error) (a After, ok bool) {
	ok = errors.As(err, &a)
	return a, ok
}
