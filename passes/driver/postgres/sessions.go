package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes/driver"
)

// PinsSweep is true: pgdriver does not interrupt a running statement when its context
// ends, so a sweep holds one connection whose backend it can name to the server.
func (Driver) PinsSweep() bool { return true }

// PinSession reads c's backend pid and sets the commit mode and statement timeout as
// session settings (not SET LOCAL per transaction, so a batch without children stays
// one autocommit statement), in one round trip.
func (Driver) PinSession(ctx context.Context, c bun.IConn, s driver.Session) (int, error) {
	q := "SELECT pg_backend_pid(), set_config('synchronous_commit', ?, false)"
	args := []any{s.SynchronousCommit}
	if s.StatementTimeout > 0 {
		q += ", set_config('statement_timeout', ?, false)"
		args = append(args, fmt.Sprint(driver.TimeoutMillis(s.StatementTimeout)))
	}
	var pid int
	var setSync, setTimeout string // set_config's results, not needed
	dst := []any{&pid, &setSync, &setTimeout}[:len(args)+1]
	if err := c.QueryRowContext(ctx, q, args...).Scan(dst...); err != nil {
		return 0, fmt.Errorf("pin the sweep connection: %w", err)
	}
	return pid, nil
}

// ResetSession puts back the two settings PinSession and SetStatementTimeout change.
func (Driver) ResetSession(ctx context.Context, c bun.IConn) error {
	_, err := c.ExecContext(ctx,
		"SELECT set_config(name, reset_val, false) FROM pg_settings WHERE name IN ('synchronous_commit', 'statement_timeout')")
	return err
}

// CancelStatement is pg_cancel_backend, run on another connection of db.
func (Driver) CancelStatement(ctx context.Context, db bun.IDB, backend int) error {
	_, err := db.ExecContext(ctx, "SELECT pg_cancel_backend(?)", backend)
	return err
}

// SetStatementTimeout sets statement_timeout for the session.
func (Driver) SetStatementTimeout(ctx context.Context, c bun.IConn, d time.Duration) error {
	_, err := c.ExecContext(ctx, "SELECT set_config('statement_timeout', ?, false)", fmt.Sprint(driver.TimeoutMillis(d)))
	return err
}
