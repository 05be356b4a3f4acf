package actortest

import (
	"time"

	"github.com/retentionkit/retention/core/clock"
)

// Epoch is the virtual time every harness starts at.
var Epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// NewClock returns a manual clock reading Epoch.
func NewClock() *clock.Manual { return clock.NewManual(Epoch) }
