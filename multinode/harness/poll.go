package harness

import (
	"context"
	"fmt"
	"net"
	"time"
)

// PollEvery is how often Poll checks a condition: short enough that a measured
// takeover is not rounded up by much, long enough not to load a shared machine.
const PollEvery = 20 * time.Millisecond

// Poll checks cond every PollEvery until it reports true, returns an error, or bound
// passes; the error names what was awaited. A bound is a guard against a hang, not a
// timing assertion.
func Poll(ctx context.Context, bound time.Duration, what string, cond func() (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	tick := time.NewTicker(PollEvery)
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

// FreePort returns a TCP port on 127.0.0.1 that nothing listens on right now.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
