package passes

import (
	"context"
	"strconv"
	"time"

	"github.com/uptrace/bun"
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
)

// SweepConnOptions are the session settings of a connection that holds a lock in
// cluster mode: a sweep's connection, or a delete slot's. They make PostgreSQL notice a
// client that died or went silent, so its locks come back in seconds instead of when the
// kernel gives up on the socket (hours, with the server's defaults). Every setting is a
// user-level one, so the sweep's own role may set it; they need PostgreSQL 14 or later
// (client_connection_check_interval is new in 14).
//
// The zero value takes every default; a negative duration or count leaves that setting
// as the server has it.
type SweepConnOptions struct {
	// ApplicationName names the session in pg_stat_activity; a node in cluster mode
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
}

// setting is one session setting as set_config takes it.
type setting struct{ name, value string }

// settings are the set_config calls o stands for, defaults filled in.
func (o SweepConnOptions) settings() []setting {
	var out []setting
	if o.ApplicationName != "" {
		out = append(out, setting{"application_name", o.ApplicationName})
	}
	ms := func(name string, d, def time.Duration) {
		if d == 0 {
			d = def
		}
		if d > 0 {
			out = append(out, setting{name, strconv.FormatInt(d.Milliseconds(), 10)})
		}
	}
	secs := func(name string, d, def time.Duration) {
		if d == 0 {
			d = def
		}
		if d > 0 {
			out = append(out, setting{name, strconv.FormatInt(int64(max(d.Round(time.Second), time.Second)/time.Second), 10)})
		}
	}
	ms("client_connection_check_interval", o.CheckInterval, DefaultCheckInterval)
	secs("tcp_keepalives_idle", o.KeepalivesIdle, DefaultKeepalivesIdle)
	secs("tcp_keepalives_interval", o.KeepalivesInterval, DefaultKeepalivesInterval)
	switch n := o.KeepalivesCount; {
	case n == 0:
		out = append(out, setting{"tcp_keepalives_count", strconv.Itoa(DefaultKeepalivesCount)})
	case n > 0:
		out = append(out, setting{"tcp_keepalives_count", strconv.Itoa(n)})
	}
	ms("tcp_user_timeout", o.UserTimeout, DefaultUserTimeout)
	return out
}

// settingsExpr is a select-list expression applying o's settings, with its arguments,
// so a connection's settings and its first lock go in one round trip. num_nonnulls
// evaluates every argument, so every set_config runs.
func (o SweepConnOptions) settingsExpr() (string, []any) {
	set := o.settings()
	if len(set) == 0 {
		return "0", nil
	}
	expr := "num_nonnulls("
	args := make([]any, 0, 2*len(set))
	for i, s := range set {
		if i > 0 {
			expr += ", "
		}
		expr += "set_config(?, ?, false)"
		args = append(args, s.name, s.value)
	}
	return expr + ")", args
}

// ApplySweepConn applies o's settings to a pinned connection, for a caller that holds
// its own locks on it.
func ApplySweepConn(ctx context.Context, conn bun.IConn, o SweepConnOptions) error {
	expr, args := o.settingsExpr()
	var n int
	return conn.QueryRowContext(ctx, "SELECT "+expr, args...).Scan(&n)
}
