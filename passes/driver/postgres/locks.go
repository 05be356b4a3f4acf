package postgres

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes/driver"
)

// SessionLocks is nil: advisory locks are held by the session and die with it.
func (Driver) SessionLocks() error { return nil }

// CheckServer refuses a server older than 14, which lacks
// client_connection_check_interval, the setting that frees a dead client's locks
// while its statement still runs.
func (Driver) CheckServer(ctx context.Context, db bun.IDB) error {
	var num int
	var version string
	if err := db.QueryRowContext(ctx, "SELECT current_setting('server_version_num')::int, current_setting('server_version')").Scan(&num, &version); err != nil {
		return fmt.Errorf("read the server version: %w", err)
	}
	if num < 140000 {
		return fmt.Errorf("%w: the server is PostgreSQL %s", driver.ErrLocksUnsupported, version)
	}
	return nil
}

// TrySessionLock is pg_try_advisory_lock in its two-key form, after setup, in one statement.
func (Driver) TrySessionLock(ctx context.Context, c bun.IConn, setup string, args []any, class, key int32) (int, bool, error) {
	if setup == "" {
		setup = "0"
	}
	var pid, n int
	var granted bool
	q := "SELECT pg_backend_pid(), " + setup + ", pg_try_advisory_lock(?::int4, ?::int4)"
	err := c.QueryRowContext(ctx, q, append(args, class, key)...).Scan(&pid, &n, &granted)
	return pid, granted, err
}

// ReleaseSessionLock is pg_advisory_unlock in its two-key form.
func (Driver) ReleaseSessionLock(ctx context.Context, c bun.IConn, class, key int32) (bool, error) {
	var released bool
	err := c.QueryRowContext(ctx, "SELECT pg_advisory_unlock(?::int4, ?::int4)", class, key).Scan(&released)
	return released, err
}

// Backend is pg_backend_pid.
func (Driver) Backend(ctx context.Context, c bun.IConn) (int, error) {
	var pid int
	err := c.QueryRowContext(ctx, "SELECT pg_backend_pid()").Scan(&pid)
	return pid, err
}
