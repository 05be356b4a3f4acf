package main

import (
	"time"

	"github.com/retentionkit/retention/core/clock"
)

// fixedClock reads one instant, so the runtime's cutoff is exactly the benchmark's; its
// timers are the wall clock's.
type fixedClock struct{ now time.Time }

func (c *fixedClock) Now() time.Time { return c.now }

func (c *fixedClock) AfterFunc(d time.Duration, f func()) clock.Timer { return time.AfterFunc(d, f) }
