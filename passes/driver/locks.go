package driver

import (
	"context"
	"errors"

	"github.com/uptrace/bun"
)

// ErrLocksUnsupported says the database has no session locks that die with their
// connection, so the sweep lock and the cluster's slots cannot run on it.
var ErrLocksUnsupported = errors.New("cluster mode needs PostgreSQL 14 or later")

// Locks are the session locks of the sweep lock and the cluster's delete slots. The
// reference behaviour is PostgreSQL's two-key advisory locks: taken without waiting,
// held by the session, and dropped by the server when the connection dies.
type Locks interface {
	// SessionLocks is nil when the driver has session locks, else an error wrapping
	// ErrLocksUnsupported; it asks nothing of the server.
	SessionLocks() error
	// CheckServer is SessionLocks plus what the server must offer (PostgreSQL 14 for
	// client_connection_check_interval); its error wraps ErrLocksUnsupported.
	CheckServer(ctx context.Context, db bun.IDB) error
	// TrySessionLock runs setup (a select-list expression with its arguments, applying the
	// connection's settings) and tries lock (class, key) on c, in one round trip, and
	// returns c's backend id and whether the lock was granted.
	TrySessionLock(ctx context.Context, c bun.IConn, setup string, args []any, class, key int32) (backend int, granted bool, err error)
	// ReleaseSessionLock gives (class, key) back; false when c did not hold it.
	ReleaseSessionLock(ctx context.Context, c bun.IConn, class, key int32) (bool, error)
	// Backend returns c's backend id.
	Backend(ctx context.Context, c bun.IConn) (int, error)
}
