package actors

import (
	"fmt"
	"strings"
)

// SweepError is what a pass actor panics with when a sweep fails, so supervision (which
// only sees panics) gets the error, and its decider can read it with errors.As.
type SweepError struct {
	Pass  string
	Sweep int64
	Err   error
}

// Error names the pass and the sweep once: a pass's own error usually starts with
// `pass "name": ` already (a table pass's do), and that prefix is not repeated.
func (e *SweepError) Error() string {
	prefix := fmt.Sprintf("pass %q", e.Pass)
	msg := fmt.Sprint(e.Err)
	if rest, ok := strings.CutPrefix(msg, prefix+": "); ok {
		msg = rest
	}
	return fmt.Sprintf("%s sweep %d: %s", prefix, e.Sweep, msg)
}

// Unwrap returns the batch's error.
func (e *SweepError) Unwrap() error { return e.Err }
