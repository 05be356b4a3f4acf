package driver

import (
	"context"
	"errors"
	"time"

	"github.com/uptrace/bun"
)

// ErrLocksUnsupported says the database has no session locks that die with their
// connection, so the sweep lock and the cluster's slots cannot run on it.
var ErrLocksUnsupported = errors.New("cluster mode needs PostgreSQL 14 or later, or MySQL 8.0 or MariaDB 10.6 or later (not Galera)")

// Locks are the session locks of the sweep lock and the cluster's delete slots. The
// reference behaviour is PostgreSQL's two-key advisory locks: taken without waiting,
// or waited for in the order the waiters asked, held by the session, nested when taken
// twice, and dropped by the server when the connection dies.
type Locks interface {
	// SessionLocks is nil when the driver has session locks, else an error wrapping
	// ErrLocksUnsupported; it asks nothing of the server.
	SessionLocks() error
	// CheckServer is SessionLocks plus what the server must offer (PostgreSQL 14 for
	// client_connection_check_interval); its error wraps ErrLocksUnsupported.
	CheckServer(ctx context.Context, db bun.IDB) error
	// ApplyLockSession applies s to c and returns c's backend id, in one round trip. It
	// prepares a connection that will hold or wait for locks beyond a sweep's own (a
	// delete slot's, a caller's own), so the server frees them soon after the client
	// dies. Reference: PostgreSQL sets each as a session setting (not per transaction).
	ApplyLockSession(ctx context.Context, c bun.IConn, s LockSession) (backend int, err error)
	// TrySessionLock applies s to c and tries lock (class, key) without waiting, in one
	// round trip, and returns c's backend id and whether the lock was granted. It is how
	// a sweep lock is taken (pinSweep).
	TrySessionLock(ctx context.Context, c bun.IConn, s LockSession, class, key int32) (backend int, granted bool, err error)
	// WaitSessionLock waits on c until lock (class, key) is granted. Waiters must be
	// served in the order they asked (the delete slots' line is fair because of it;
	// PostgreSQL's blocking advisory lock is). The wait may not end when ctx does (PostgreSQL's
	// client does not interrupt a statement): the caller ends it with CancelStatement.
	WaitSessionLock(ctx context.Context, c bun.IConn, class, key int32) error
	// TryFirstSessionLock tries (class, keys[i]) in order, without waiting, and takes the
	// first that is free and no other; with one taken it also gives back (leaveClass,
	// leaveKey), in the same statement, and says whether that was held. It returns -1 and
	// gives nothing back when every key is taken. It is the head of the slots' line
	// taking a slot and leaving the line at once, so the next in line moves up with no
	// window where a slot is held and the line is not.
	TryFirstSessionLock(ctx context.Context, c bun.IConn, class int32, keys []int32, leaveClass, leaveKey int32) (slot int, left bool, err error)
	// ReleaseSessionLock gives (class, key) back; false when c did not hold it.
	ReleaseSessionLock(ctx context.Context, c bun.IConn, class, key int32) (bool, error)
	// Backend returns c's backend id.
	Backend(ctx context.Context, c bun.IConn) (int, error)
	// SetIdleTimeout makes the server end c's session once it sits idle between
	// statements for longer than d; d <= 0 puts back the server's own setting. It bounds
	// the one idle wait that must not outlast a paused client: the head of the delete
	// slots' line holds the queue lock between its polls, so without it a member frozen
	// there (SIGSTOP, a starved container) would stall every member's line until it woke.
	// Reference: PostgreSQL's idle_session_timeout (14 or later).
	SetIdleTimeout(ctx context.Context, c bun.IConn, d time.Duration) error
}

// LockSession is the server side of a connection that holds or waits for session
// locks: the settings that make the server notice a client that died or went silent,
// so its locks come back in seconds instead of when the kernel gives up on the socket.
// Every value is resolved (passes.SweepConnOptions fills in the defaults); a zero
// leaves that setting as the server has it.
type LockSession struct {
	// ApplicationName names the session where the server lists its sessions, and comes
	// back in LockHolder; "" keeps the DSN's.
	ApplicationName string
	// CheckInterval is how often a running statement checks that its client is still
	// connected (PostgreSQL: client_connection_check_interval, in milliseconds).
	CheckInterval time.Duration
	// KeepaliveIdle, KeepaliveInterval and KeepaliveCount are the server's TCP
	// keepalives for the session (PostgreSQL: tcp_keepalives_*, in whole seconds, at
	// least one), which find an idle connection whose client went silent.
	KeepaliveIdle     time.Duration
	KeepaliveInterval time.Duration
	KeepaliveCount    int
	// UserTimeout is how long data the server sent may stay unacknowledged before it
	// drops the connection (PostgreSQL: tcp_user_timeout, in milliseconds).
	UserTimeout time.Duration
	// WaitUnbounded makes a lock wait on the session never time out, whatever the role's
	// default (PostgreSQL: lock_timeout 0), for a connection that waits in line with
	// WaitSessionLock.
	WaitUnbounded bool
}
