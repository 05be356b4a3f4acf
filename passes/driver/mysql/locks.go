package mysql

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes/driver"
)

// SessionLocks refuses: MySQL's session locks (GET_LOCK on the sweep's own connection)
// are the way to cluster mode here, but that is not built yet, and a node must not run
// as a cluster member without the exclusivity it promises.
func (Driver) SessionLocks() error {
	return fmt.Errorf("%w: MySQL/MariaDB cluster mode (GET_LOCK on the sweep's connection) is not built yet", driver.ErrLocksUnsupported)
}

// CheckServer refuses as SessionLocks does, without asking the server.
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

// Backend is CONNECTION_ID(), the id KILL QUERY and the lock views name a session by.
func (Driver) Backend(ctx context.Context, c bun.IConn) (int, error) {
	var id int
	err := c.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id)
	return id, err
}
