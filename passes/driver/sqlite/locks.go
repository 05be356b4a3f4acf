package sqlite

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes/driver"
)

// SessionLocks refuses: SQLite has no locks a session holds apart from its writes.
func (Driver) SessionLocks() error {
	return fmt.Errorf("%w: the database is sqlite", driver.ErrLocksUnsupported)
}

// CheckServer refuses as SessionLocks does.
func (d Driver) CheckServer(context.Context, bun.IDB) error { return d.SessionLocks() }

// ApplyLockSession refuses as SessionLocks does.
func (d Driver) ApplyLockSession(context.Context, bun.IConn, driver.LockSession) (int, error) {
	return 0, d.SessionLocks()
}

// TrySessionLock refuses as SessionLocks does.
func (d Driver) TrySessionLock(context.Context, bun.IConn, driver.LockSession, int32, int32) (int, bool, error) {
	return 0, false, d.SessionLocks()
}

// WaitSessionLock refuses as SessionLocks does.
func (d Driver) WaitSessionLock(context.Context, bun.IConn, int32, int32) error {
	return d.SessionLocks()
}

// TryFirstSessionLock refuses as SessionLocks does.
func (d Driver) TryFirstSessionLock(context.Context, bun.IConn, int32, []int32, int32, int32) (int, bool, error) {
	return -1, false, d.SessionLocks()
}

// ReleaseSessionLock refuses as SessionLocks does.
func (d Driver) ReleaseSessionLock(context.Context, bun.IConn, int32, int32) (bool, error) {
	return false, d.SessionLocks()
}

// Backend is 0: SQLite has no server process to name.
func (Driver) Backend(context.Context, bun.IConn) (int, error) { return 0, nil }
