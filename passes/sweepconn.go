package passes

import (
	"context"
	"time"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes/driver"
)

// The defaults of SweepConnOptions. Together they bound how long a dead or silent
// member's advisory locks outlive it: a member killed while its connection is idle frees
// its locks at once (the kernel closes the socket); killed while a batch statement runs,
// within DefaultCheckInterval; its host gone silent, within about
// DefaultKeepalivesIdle + DefaultKeepalivesCount*DefaultKeepalivesInterval = 7 s when the
// connection is idle, and within DefaultUserTimeout (7 s) after the server's last unacked
// send when it is not. Shorter settings free locks sooner but end a healthy sweep on a
// network that drops packets for that long; the sweep then fails and is retried, which
// is safe, only wasteful.
const (
	DefaultCheckInterval      = time.Second
	DefaultKeepalivesIdle     = 4 * time.Second
	DefaultKeepalivesInterval = time.Second
	DefaultKeepalivesCount    = 3
	DefaultUserTimeout        = 7 * time.Second
	// DefaultHeadIdleTimeout bounds how long the head of the delete slots' line may sit
	// idle: sixty times its longest pause between polls (SlotPollMax), short enough that
	// a member paused at the head (see SweepConnOptions.HeadIdleTimeout) costs the others
	// a few seconds rather than their whole pause.
	DefaultHeadIdleTimeout = 3 * time.Second
)

// SweepConnOptions are the session settings of a connection that holds a lock in
// cluster mode: a sweep's connection, or a delete slot's. They make PostgreSQL notice a
// client that died or went silent, so its locks come back in seconds instead of when the
// kernel gives up on the socket (hours, with the server's defaults). Every setting is a
// user-level one, so the sweep's own role may set it; they need PostgreSQL 14 or later
// (client_connection_check_interval is new in 14). MySQL and MariaDB have no per-session
// equivalents: their driver applies none but HeadIdleTimeout, and docs/cluster.md says
// how soon a dead member's locks come back there.
//
// The zero value takes every default; a negative duration or count leaves that setting
// as the server has it.
type SweepConnOptions struct {
	// ApplicationName names the session in the server's list of sessions; a node in cluster mode
	// passes "retention:<member-id>", which LockHolders reads back. Empty keeps the
	// DSN's.
	ApplicationName string
	// CheckInterval is client_connection_check_interval: how often a running statement
	// checks that its client is still connected. Default 1s.
	CheckInterval time.Duration
	// KeepalivesIdle, KeepalivesInterval and KeepalivesCount are the server's TCP
	// keepalive settings for the session (tcp_keepalives_idle, _interval, _count), in
	// whole seconds: they find an idle connection whose client went silent. Defaults 4s,
	// 1s and 3.
	KeepalivesIdle     time.Duration
	KeepalivesInterval time.Duration
	KeepalivesCount    int
	// UserTimeout is tcp_user_timeout: how long data the server sent may stay
	// unacknowledged before it drops the connection, which keepalives alone do not
	// cover. Default 7s.
	UserTimeout time.Duration
	// HeadIdleTimeout is how long a delete slot's connection may sit idle while it waits
	// in line (PostgreSQL's idle_session_timeout, MySQL's wait_timeout): a live head
	// polls every SlotPollMax at most, so a longer silence means its member is paused,
	// and the server ends the session, which gives back the queue lock so the next in
	// line moves up. The setting is put back once the slot is taken: a slot's holder may
	// rightly sit idle for a whole sweep. Only AdvisorySlots reads it. Default 3s.
	HeadIdleTimeout time.Duration
}

// headIdleTimeout is HeadIdleTimeout resolved: the default for zero, none (0) when
// negative.
func (o SweepConnOptions) headIdleTimeout() time.Duration {
	switch {
	case o.HeadIdleTimeout == 0:
		return DefaultHeadIdleTimeout
	case o.HeadIdleTimeout < 0:
		return 0
	}
	return o.HeadIdleTimeout
}

// lockSession resolves o into the session settings of a lock-holding connection,
// defaults filled in; a setting left to the server (negative) is zero, which the driver
// leaves alone.
func (o SweepConnOptions) lockSession() driver.LockSession {
	pick := func(d, def time.Duration) time.Duration {
		switch {
		case d == 0:
			return def
		case d < 0:
			return 0
		}
		return d
	}
	s := driver.LockSession{
		ApplicationName:   o.ApplicationName,
		CheckInterval:     pick(o.CheckInterval, DefaultCheckInterval),
		KeepaliveIdle:     pick(o.KeepalivesIdle, DefaultKeepalivesIdle),
		KeepaliveInterval: pick(o.KeepalivesInterval, DefaultKeepalivesInterval),
		UserTimeout:       pick(o.UserTimeout, DefaultUserTimeout),
	}
	switch n := o.KeepalivesCount; {
	case n == 0:
		s.KeepaliveCount = DefaultKeepalivesCount
	case n > 0:
		s.KeepaliveCount = n
	}
	return s
}

// ApplySweepConn applies o's settings to a pinned connection, for a caller that holds
// its own locks on it. Its error wraps ErrClusterUnsupported on a database without
// session locks.
func ApplySweepConn(ctx context.Context, conn bun.Conn, o SweepConnOptions) error {
	d, err := DriverFor(conn)
	if err != nil {
		return err
	}
	_, err = d.ApplyLockSession(ctx, conn, o.lockSession())
	return err
}
