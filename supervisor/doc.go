// Package supervisor decides what happens to a pass whose sweep failed, and carries the
// decision out as a protoactor SupervisorStrategy on the injected clock.
//
// protoactor-go's own strategies do not fit: its "exponential" backoff is linear,
// uncapped and on wall time, and its restart statistics read the wall clock too. These
// strategies keep their own failure history on a clock.Clock, and classify each
// failure with Decide: a deterministic error is not retried before the pass's normal
// interval, a retry-after hint is a floor on the backoff, and anything else (a timeout,
// a lost connection, a panic) is retried with exponential backoff.
//
// Supervision only sees panics, so the pass actor panics with the batch's error; Decide
// reads it with errors.As.
package supervisor
