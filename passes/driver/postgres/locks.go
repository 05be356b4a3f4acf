package postgres

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

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

// setting is one session setting as set_config takes it.
type setting struct{ name, value string }

// lockSettings are the set_config calls s stands for, in a fixed order.
func lockSettings(s driver.LockSession) []setting {
	var out []setting
	if s.WaitUnbounded {
		out = append(out, setting{"lock_timeout", "0"})
	}
	if s.ApplicationName != "" {
		out = append(out, setting{"application_name", s.ApplicationName})
	}
	ms := func(name string, d time.Duration) {
		if d > 0 {
			out = append(out, setting{name, strconv.FormatInt(d.Milliseconds(), 10)})
		}
	}
	secs := func(name string, d time.Duration) {
		if d > 0 {
			out = append(out, setting{name, strconv.FormatInt(int64(max(d.Round(time.Second), time.Second)/time.Second), 10)})
		}
	}
	ms("client_connection_check_interval", s.CheckInterval)
	secs("tcp_keepalives_idle", s.KeepaliveIdle)
	secs("tcp_keepalives_interval", s.KeepaliveInterval)
	if s.KeepaliveCount > 0 {
		out = append(out, setting{"tcp_keepalives_count", strconv.Itoa(s.KeepaliveCount)})
	}
	ms("tcp_user_timeout", s.UserTimeout)
	return out
}

// settingsExpr is a select-list expression applying s, with its arguments, so a
// connection's settings and its first lock go in one round trip. num_nonnulls
// evaluates every argument, so every set_config runs.
func settingsExpr(s driver.LockSession) (string, []any) {
	set := lockSettings(s)
	if len(set) == 0 {
		return "0", nil
	}
	var b strings.Builder
	b.WriteString("num_nonnulls(")
	args := make([]any, 0, 2*len(set))
	for i, st := range set {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("set_config(?, ?, false)")
		args = append(args, st.name, st.value)
	}
	b.WriteString(")")
	return b.String(), args
}

// ApplyLockSession is set_config of each of s's settings, with pg_backend_pid, in one
// statement.
func (Driver) ApplyLockSession(ctx context.Context, c bun.IConn, s driver.LockSession) (int, error) {
	expr, args := settingsExpr(s)
	var pid, n int
	err := c.QueryRowContext(ctx, "SELECT pg_backend_pid(), "+expr, args...).Scan(&pid, &n)
	return pid, err
}

// SetIdleTimeout is idle_session_timeout, in milliseconds (at least one), or RESET,
// which puts back the role's, the database's or the server's value.
func (Driver) SetIdleTimeout(ctx context.Context, c bun.IConn, d time.Duration) error {
	if d <= 0 {
		_, err := c.ExecContext(ctx, "RESET idle_session_timeout")
		return err
	}
	_, err := c.ExecContext(ctx, "SELECT set_config('idle_session_timeout', ?, false)", strconv.FormatInt(max(d.Milliseconds(), 1), 10))
	return err
}

// TrySessionLock is pg_try_advisory_lock in its two-key form, after s's settings, in
// one statement.
func (Driver) TrySessionLock(ctx context.Context, c bun.IConn, s driver.LockSession, class, key int32) (int, bool, error) {
	expr, args := settingsExpr(s)
	var pid, n int
	var granted bool
	q := "SELECT pg_backend_pid(), " + expr + ", pg_try_advisory_lock(?::int4, ?::int4)"
	err := c.QueryRowContext(ctx, q, append(args, class, key)...).Scan(&pid, &n, &granted)
	return pid, granted, err
}

// WaitSessionLock is the blocking pg_advisory_lock in its two-key form, whose waiters
// PostgreSQL serves in the order they asked.
func (Driver) WaitSessionLock(ctx context.Context, c bun.IConn, class, key int32) error {
	_, err := c.ExecContext(ctx, "SELECT pg_advisory_lock(?::int4, ?::int4)", class, key)
	return err
}

// TryFirstSessionLock is one statement: a CASE takes the first free key and tries no
// further (its branches run in order, each only if needed); the materialized CTE makes
// sure it runs once; the outer CASE gives back (leaveClass, leaveKey) only with a key
// taken.
func (Driver) TryFirstSessionLock(ctx context.Context, c bun.IConn, class int32, keys []int32, leaveClass, leaveKey int32) (int, bool, error) {
	var b strings.Builder
	b.WriteString("WITH t AS MATERIALIZED (SELECT CASE")
	args := make([]any, 0, 2*len(keys)+2)
	for i, k := range keys {
		fmt.Fprintf(&b, " WHEN pg_try_advisory_lock(?::int4, ?::int4) THEN %d", i)
		args = append(args, class, k)
	}
	b.WriteString(" ELSE -1 END AS slot) SELECT slot, CASE WHEN slot >= 0 THEN pg_advisory_unlock(?::int4, ?::int4) ELSE false END FROM t")
	args = append(args, leaveClass, leaveKey)
	var slot int
	var left bool
	if err := c.QueryRowContext(ctx, b.String(), args...).Scan(&slot, &left); err != nil {
		return -1, false, err
	}
	return slot, left, nil
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
