package mysql

import (
	"context"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes/driver"
)

// LockHolders refuses as SessionLocks does: with no cluster mode on MySQL yet, no
// session lock of retention's is ever held to be read.
func (d Driver) LockHolders(context.Context, bun.IDB, int32, []int32) (map[int32]driver.LockHolder, error) {
	return nil, d.SessionLocks()
}

// LocksHeld refuses as SessionLocks does.
func (d Driver) LocksHeld(context.Context, bun.IDB, int32, []int32) (int, error) {
	return 0, d.SessionLocks()
}

// LockLine refuses as SessionLocks does.
func (d Driver) LockLine(context.Context, bun.IDB, int32, int32) (int, error) {
	return 0, d.SessionLocks()
}
