package driver

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"
)

// NoSessionLocks is the Locks and LockViews of a driver that offers no session locks,
// for it to embed beside its own SessionLocks and CheckServer (which say why, in the
// database's words): every lock method refuses with an error wrapping
// ErrLocksUnsupported. Nothing reaches these methods once SessionLocks has refused, so
// their one generic reason is a backstop, not a message an operator reads. The zero
// value is ready to use.
type NoSessionLocks struct{}

func (NoSessionLocks) refused() error {
	return fmt.Errorf("%w: this driver offers no session locks", ErrLocksUnsupported)
}

// ApplyLockSession refuses.
func (n NoSessionLocks) ApplyLockSession(context.Context, bun.IConn, LockSession) (int, error) {
	return 0, n.refused()
}

// TrySessionLock refuses.
func (n NoSessionLocks) TrySessionLock(context.Context, bun.IConn, LockSession, int32, int32) (int, bool, error) {
	return 0, false, n.refused()
}

// WaitSessionLock refuses.
func (n NoSessionLocks) WaitSessionLock(context.Context, bun.IConn, int32, int32) error {
	return n.refused()
}

// TryFirstSessionLock refuses.
func (n NoSessionLocks) TryFirstSessionLock(context.Context, bun.IConn, int32, []int32, int32, int32) (int, bool, error) {
	return -1, false, n.refused()
}

// ReleaseSessionLock refuses.
func (n NoSessionLocks) ReleaseSessionLock(context.Context, bun.IConn, int32, int32) (bool, error) {
	return false, n.refused()
}

// SetIdleTimeout refuses.
func (n NoSessionLocks) SetIdleTimeout(context.Context, bun.IConn, time.Duration) error {
	return n.refused()
}

// LockHolders refuses: with no session locks, none is ever held to be read.
func (n NoSessionLocks) LockHolders(context.Context, bun.IDB, int32, []int32) (map[int32]LockHolder, error) {
	return nil, n.refused()
}

// LocksHeld refuses.
func (n NoSessionLocks) LocksHeld(context.Context, bun.IDB, int32, []int32) (int, error) {
	return 0, n.refused()
}

// LockLine refuses.
func (n NoSessionLocks) LockLine(context.Context, bun.IDB, int32, int32) (int, error) {
	return 0, n.refused()
}
