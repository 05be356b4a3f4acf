package sqlite

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes/driver"
)

// SessionLocks refuses: SQLite has no locks a session holds apart from its writes. The
// other lock methods are driver.NoSessionLocks's refusals.
func (Driver) SessionLocks() error {
	return fmt.Errorf("%w: the database is sqlite", driver.ErrLocksUnsupported)
}

// CheckServer refuses as SessionLocks does.
func (d Driver) CheckServer(context.Context, bun.IDB) error { return d.SessionLocks() }

// Backend is 0: SQLite has no server process to name.
func (Driver) Backend(context.Context, bun.IConn) (int, error) { return 0, nil }
