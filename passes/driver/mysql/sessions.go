package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes/driver"
)

// PinsSweep is true: go-sql-driver does not stop a running statement on the server when
// its context ends (it drops the connection, and the server runs on), so a sweep holds
// one connection whose id it can name to KILL QUERY.
func (Driver) PinsSweep() bool { return true }

// PinSession reads c's connection id and, with a statement timeout, bounds c's
// statements: max_statement_time (seconds) on MariaDB, which covers DELETE;
// max_execution_time (milliseconds) on MySQL, which covers only SELECT, so there a
// DELETE is bounded by the cancellation (KILL QUERY) alone. MySQL has no per-session
// commit mode like PostgreSQL's synchronous_commit, so s.SynchronousCommit is not
// applied.
func (d Driver) PinSession(ctx context.Context, c bun.IConn, s driver.Session) (int, error) {
	var id int
	var version string
	if err := c.QueryRowContext(ctx, "SELECT CONNECTION_ID(), VERSION()").Scan(&id, &version); err != nil {
		return 0, fmt.Errorf("pin the sweep connection: %w", err)
	}
	if s.StatementTimeout > 0 {
		if err := setTimeout(ctx, c, version, s.StatementTimeout); err != nil {
			return 0, fmt.Errorf("pin the sweep connection: %w", err)
		}
	}
	return id, nil
}

// ResetSession puts the statement timeout back to the server's default.
func (Driver) ResetSession(ctx context.Context, c bun.IConn) error {
	v, err := sessionVersion(ctx, c)
	if err != nil {
		return err
	}
	_, err = c.ExecContext(ctx, "SET SESSION "+timeoutVariable(v)+" = DEFAULT")
	return err
}

// CancelStatement is KILL QUERY, run on another connection of db: it ends the
// statement and leaves the connection open, and the transaction rolls back with it.
func (Driver) CancelStatement(ctx context.Context, db bun.IDB, backend int) error {
	_, err := db.ExecContext(ctx, "KILL QUERY ?", backend)
	return err
}

// SetStatementTimeout bounds c's later statements by d, as PinSession does.
func (Driver) SetStatementTimeout(ctx context.Context, c bun.IConn, d time.Duration) error {
	var version string
	if err := c.QueryRowContext(ctx, "SELECT VERSION()").Scan(&version); err != nil {
		return err
	}
	return setTimeout(ctx, c, version, d)
}

// rowQuerier is a pool or a pinned connection, whichever a version is read on.
type rowQuerier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// sessionVersion reads and parses c's server version.
func sessionVersion(ctx context.Context, c rowQuerier) (serverVersion, error) {
	var text string
	if err := c.QueryRowContext(ctx, "SELECT VERSION()").Scan(&text); err != nil {
		return serverVersion{}, err
	}
	return parseVersion(text)
}

// timeoutVariable is the session variable that bounds a statement's run time.
func timeoutVariable(v serverVersion) string {
	if v.mariaDB {
		return "max_statement_time"
	}
	return "max_execution_time"
}

// setTimeout sets the statement timeout variable of the server version names to d,
// rounded up to what the variable counts (MariaDB's are seconds with a fraction).
func setTimeout(ctx context.Context, c bun.IConn, version string, d time.Duration) error {
	v, err := parseVersion(version)
	if err != nil {
		return err
	}
	var value any = driver.TimeoutMillis(d)
	if v.mariaDB {
		value = float64(driver.TimeoutMillis(d)) / 1000
	}
	_, err = c.ExecContext(ctx, "SET SESSION "+timeoutVariable(v)+" = ?", value)
	return err
}
