package supervisor

import "time"

// The defaults a zero Backoff and a zero Limit stand for.
const (
	DefaultInitialBackoff = time.Second
	DefaultMaxBackoff     = 5 * time.Minute
	DefaultMultiplier     = 2.0
	DefaultMaxRestarts    = 10
	DefaultRestartWindow  = 10 * time.Minute
)

// Backoff is an exponential schedule: Initial after the first failure, multiplied by
// Multiplier after each further one, never above Max. A good sweep resets it. Zero fields
// take the defaults (1s, 5m, ×2).
type Backoff struct {
	Initial    time.Duration
	Max        time.Duration
	Multiplier float64
}

func (b Backoff) withDefaults() Backoff {
	if b.Initial <= 0 {
		b.Initial = DefaultInitialBackoff
	}
	if b.Max <= 0 {
		b.Max = DefaultMaxBackoff
	}
	if b.Multiplier < 1 {
		b.Multiplier = DefaultMultiplier
	}
	return b
}

// Delay returns the wait after the attempt-th failure in a row (1 is the first).
func (b Backoff) Delay(attempt int) time.Duration {
	b = b.withDefaults()
	d := float64(b.Initial)
	for i := 1; i < attempt && d < float64(b.Max); i++ {
		d *= b.Multiplier
	}
	return min(time.Duration(d), b.Max)
}

// Limit bounds restarts: more than MaxRestarts failures within Window and the pass (or
// the group) is stopped for good, instead of restarted. Zero fields take the defaults
// (10 within 10m); a negative MaxRestarts means no limit.
type Limit struct {
	MaxRestarts int
	Window      time.Duration
}

func (l Limit) withDefaults() Limit {
	if l.MaxRestarts == 0 {
		l.MaxRestarts = DefaultMaxRestarts
	}
	if l.Window <= 0 {
		l.Window = DefaultRestartWindow
	}
	return l
}

// Policy is how a runtime supervises its passes. The zero value takes every default.
type Policy struct {
	Backoff Backoff
	Limit   Limit
}
