package mysql

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes/driver"
)

// SessionLocks refuses: MySQL's session locks (GET_LOCK on the sweep's own connection)
// are the way to cluster mode here, but that is not built yet, and a node must not run
// as a cluster member without the exclusivity it promises. The other lock methods are
// driver.NoSessionLocks's refusals.
func (Driver) SessionLocks() error {
	return fmt.Errorf("%w: MySQL/MariaDB cluster mode (GET_LOCK on the sweep's connection) is not built yet", driver.ErrLocksUnsupported)
}

// CheckServer refuses as SessionLocks does, without asking the server.
func (d Driver) CheckServer(context.Context, bun.IDB) error { return d.SessionLocks() }

// Backend is CONNECTION_ID(), the id KILL QUERY and the lock views name a session by.
func (Driver) Backend(ctx context.Context, c bun.IConn) (int, error) {
	var id int
	err := c.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id)
	return id, err
}
