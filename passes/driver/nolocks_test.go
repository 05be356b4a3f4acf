package driver_test

import (
	"context"
	"errors"
	"testing"

	"github.com/retentionkit/retention/passes/driver"
)

// TestNoSessionLocksRefusesEveryLockMethod: a driver that embeds NoSessionLocks refuses
// each lock method with ErrLocksUnsupported, so a caller that skipped SessionLocks still
// learns why instead of holding a lock that was never taken.
func TestNoSessionLocksRefusesEveryLockMethod(t *testing.T) {
	t.Parallel()
	ctx, n := context.Background(), driver.NoSessionLocks{}
	calls := map[string]func() error{
		"ApplyLockSession": func() error { _, err := n.ApplyLockSession(ctx, nil, driver.LockSession{}); return err },
		"TrySessionLock": func() error {
			_, granted, err := n.TrySessionLock(ctx, nil, driver.LockSession{}, 1, 2)
			if granted {
				return errors.New("granted")
			}
			return err
		},
		"WaitSessionLock": func() error { return n.WaitSessionLock(ctx, nil, 1, 2) },
		"TryFirstSessionLock": func() error {
			slot, _, err := n.TryFirstSessionLock(ctx, nil, 1, []int32{2}, 3, 4)
			if slot >= 0 {
				return errors.New("a slot taken")
			}
			return err
		},
		"ReleaseSessionLock": func() error { _, err := n.ReleaseSessionLock(ctx, nil, 1, 2); return err },
		"LockHolders":        func() error { _, err := n.LockHolders(ctx, nil, 1, []int32{2}); return err },
		"LocksHeld":          func() error { _, err := n.LocksHeld(ctx, nil, 1, []int32{2}); return err },
		"LockLine":           func() error { _, err := n.LockLine(ctx, nil, 1, 2); return err },
	}
	for name, call := range calls {
		if err := call(); !errors.Is(err, driver.ErrLocksUnsupported) {
			t.Errorf("%s: %v; want ErrLocksUnsupported", name, err)
		}
	}
}
