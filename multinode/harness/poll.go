package harness

import (
	"context"
	"fmt"
	"time"
)

// PollEvery is how often Poll checks a condition: short enough that a measured
// takeover is not rounded up by much, long enough not to load a shared machine.
const PollEvery = 20 * time.Millisecond

// Poll checks cond every PollEvery until it reports true, returns an error, or bound
// passes; the error names what was awaited. A bound is a guard against a hang, not a
// timing assertion.
func Poll(ctx context.Context, bound time.Duration, what string, cond func() (bool, error)) error {
	return PollWith(ctx, PollEvery, bound, what, cond)
}

// ViewEvery is how often a condition over the nodes' /cluster is checked: each view
// reads pg_locks, so polling it as fast as the database would load the nodes.
const ViewEvery = 200 * time.Millisecond

// PollWith is Poll checking every every.
func PollWith(ctx context.Context, every, bound time.Duration, what string, cond func() (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	tick := time.NewTicker(every)
	defer tick.Stop()
	var last error
	for {
		ok, err := cond()
		if ok && err == nil {
			return nil
		}
		if err != nil {
			last = err
		}
		select {
		case <-ctx.Done():
			if last != nil {
				return fmt.Errorf("%s: not within %v (last error: %w)", what, bound, last)
			}
			return fmt.Errorf("%s: not within %v", what, bound)
		case <-tick.C:
		}
	}
}

// Steady wraps cond so it reports true only once cond has held at every check for d:
// a state a scenario must see settle (no member about to fence itself), not pass
// through.
func Steady(d time.Duration, cond func() (bool, error)) func() (bool, error) {
	var since time.Time
	return func() (bool, error) {
		ok, err := cond()
		if !ok || err != nil {
			since = time.Time{}
			return false, err
		}
		if since.IsZero() {
			since = time.Now()
		}
		return time.Since(since) >= d, nil
	}
}
