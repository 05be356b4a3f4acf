package mysql

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes/driver"
)

// Session locks on MySQL and MariaDB are GET_LOCK's named user locks: held by the
// session, taken without waiting (timeout 0) or waited for, nested when one session
// takes a name twice (each take needs its own RELEASE_LOCK), several per session (MySQL
// 5.7.5+, MariaDB 10.0.2+), and dropped by the server with the session. They are not
// transactional: a commit or rollback keeps them.
//
// What GET_LOCK gives differently from PostgreSQL's advisory locks, and why it is still
// safe, is written down in docs/drivers.md ("Cluster mode on MySQL and MariaDB"); in
// short:
//
//   - Names are the server's, not the database's: lockNameSQL puts a hash of the current
//     database in every name, so two databases on one server never share a lock.
//   - Waiters: the server grants a released lock to its waiters in the order they
//     asked (its metadata-lock queue; the passtest sessionlocks area checks it on the
//     server under test). Nothing in MySQL's manual promises it.
//   - A killed wait (KILL QUERY) returns NULL rather than an error: WaitSessionLock
//     turns it into one.
//   - A waiting session notices its client is gone within about a second (the server
//     checks the socket while a lock wait lasts); an idle holder's closed socket ends
//     the session at once; a statement that runs for a dead client runs to its end.
//   - The server keeps no application name per session that another session can read,
//     so ApplyLockSession sets none and LockHolders names a holder by its connection id
//     and address.

// waitForever is GET_LOCK's timeout for a wait the caller ends with CancelStatement: a
// year, in seconds. MariaDB refuses a negative timeout (MySQL's "forever") with a
// warning and a NULL, so a wait is a long finite one on both.
const waitForever = 365 * 24 * 60 * 60

// lockNamePrefix starts every lock name retention takes, so a DBA reading the server's
// locks can tell ours apart.
const lockNamePrefix = "rtn:"

// dbHashChars is how much of the SHA-256 of the database name (hex) a lock name keeps:
// 96 bits, so two databases of one server sharing a name's hash is out of the question,
// and the whole name stays at 46 characters, within GET_LOCK's 64.
const dbHashChars = 24

// lockKeyText is the part of (class, key)'s lock name that does not depend on the
// database, as hex: "rtn:<class>:<key>:". Hex keeps names apart on MariaDB, whose lock
// names are case-insensitive.
func lockKeyText(class, key int32) string {
	return fmt.Sprintf("%s%08x:%08x:", lockNamePrefix, uint32(class), uint32(key))
}

// lockNameSQL is an SQL expression for the name of lock (class, key) in the session's
// current database, computed by the server, so taking a lock needs no round trip to
// learn the database first. It has no argument to bind: a statement holding it shows
// its class and key as written, which LockLine reads from the server's process list.
func lockNameSQL(class, key int32) string {
	return fmt.Sprintf("CONCAT('%s', LEFT(SHA2(DATABASE(), 256), %d))", lockKeyText(class, key), dbHashChars)
}

// lockName is the name lockNameSQL computes for database, for tests and for a DBA who
// looks for one of our locks.
func lockName(database string, class, key int32) string {
	sum := sha256.Sum256([]byte(database))
	return lockKeyText(class, key) + hex.EncodeToString(sum[:])[:dbHashChars]
}

// errNoDatabase is a session with no current database: lock names are made from it.
var errNoDatabase = errors.New("the connection has no current database (the DSN names none), and session lock names are made from it")

// SessionLocks is nil: GET_LOCK's locks are held by the session and die with it.
func (Driver) SessionLocks() error { return nil }

// CheckServer refuses what GET_LOCK cannot keep exclusive: a Galera cluster (wsrep_on:
// MariaDB refuses GET_LOCK there, and each node would keep its own locks anyway), a
// connection with no current database (lock names are made from it), and a session that
// is not stable: a proxy that multiplexes sessions (ProxySQL, say) can send two
// statements of one client connection to two server sessions, so a lock taken by one
// would not be held by the next; it shows as a CONNECTION_ID that changes between two
// statements on one connection. The version is Open's to refuse.
func (Driver) CheckServer(ctx context.Context, db bun.IDB) error {
	c, err := pinned(ctx, db)
	if err != nil {
		return fmt.Errorf("check session locks: %w", err)
	}
	defer c.close()
	var first, second int
	var database sql.NullString
	if err := c.QueryRowContext(ctx, "SELECT CONNECTION_ID(), DATABASE()").Scan(&first, &database); err != nil {
		return fmt.Errorf("check session locks: %w", err)
	}
	if !database.Valid {
		return fmt.Errorf("%w: %w", driver.ErrLocksUnsupported, errNoDatabase)
	}
	var wsrepName, wsrep string
	switch err := c.QueryRowContext(ctx, "SHOW VARIABLES LIKE 'wsrep_on'").Scan(&wsrepName, &wsrep); {
	case errors.Is(err, sql.ErrNoRows): // MySQL: no Galera
	case err != nil:
		return fmt.Errorf("check session locks: read wsrep_on: %w", err)
	case strings.EqualFold(wsrep, "ON"):
		return fmt.Errorf("%w: the server is a Galera cluster node (wsrep_on=ON), where GET_LOCK is refused and not cluster-wide", driver.ErrLocksUnsupported)
	}
	if err := c.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&second); err != nil {
		return fmt.Errorf("check session locks: %w", err)
	}
	if first != second {
		return fmt.Errorf("%w: the connection's server session changed between two statements (connection id %d, then %d): a proxy multiplexes sessions, so a lock would not stay with its connection", driver.ErrLocksUnsupported, first, second)
	}
	return nil
}

// pinnedIDB is a handle whose statements all go to one connection, and how to let it go.
type pinnedIDB struct {
	bun.IDB
	close func()
}

// pinned returns db itself when it is already one connection (a bun.Conn or a
// transaction), else a connection taken from db's pool.
func pinned(ctx context.Context, db bun.IDB) (pinnedIDB, error) {
	pool, ok := db.(*bun.DB)
	if !ok {
		return pinnedIDB{IDB: db, close: func() {}}, nil
	}
	c, err := pool.Conn(ctx)
	if err != nil {
		return pinnedIDB{}, err
	}
	return pinnedIDB{IDB: c, close: func() { _ = c.Close() }}, nil
}

// ApplyLockSession returns c's connection id and sets nothing: MySQL has no per-session
// setting that frees a dead client's locks sooner without also ending a healthy one.
// Each field of s, and what stands for it here:
//
//   - ApplicationName: a session has none another session can read (connection
//     attributes are fixed at connect and shown only by performance_schema).
//   - CheckInterval: nothing checks a running statement's client; a lock wait checks it
//     about once a second by itself (see docs/drivers.md).
//   - KeepaliveIdle, KeepaliveInterval, KeepaliveCount, UserTimeout: the server's TCP
//     keepalives are global (MariaDB's tcp_keepalive_time, _interval, _probes) or the
//     kernel's; wait_timeout would end an idle holder whose client is alive (a delete
//     slot stays idle for as long as its pass sweeps), letting a second member take
//     a lock the first still believes it holds. Only the head of the slots' line, idle
//     for no more than a poll while alive, sets it (SetIdleTimeout).
//   - WaitUnbounded: WaitSessionLock lifts the statement time limits on its own wait.
func (d Driver) ApplyLockSession(ctx context.Context, c bun.IConn, _ driver.LockSession) (int, error) {
	return d.Backend(ctx, c)
}

// SetIdleTimeout is the session's wait_timeout, in whole seconds rounded up, or
// DEFAULT, which is the server's global value. The server closes a connection idle past
// it, and GET_LOCK's locks go with it.
func (Driver) SetIdleTimeout(ctx context.Context, c bun.IConn, d time.Duration) error {
	q := "SET SESSION wait_timeout = DEFAULT"
	if d > 0 {
		q = fmt.Sprintf("SET SESSION wait_timeout = %d", int64((d+time.Second-1)/time.Second))
	}
	_, err := c.ExecContext(ctx, q)
	return err
}

// grantedLock reads GET_LOCK's answer: 1 granted, 0 not (taken, or timed out), NULL an
// error in the server (killed, say), which is an error here.
func grantedLock(v sql.NullInt64, class, key int32) (bool, error) {
	if !v.Valid {
		return false, fmt.Errorf("GET_LOCK of %s failed in the server (the statement was killed, or an error)", lockKeyText(class, key))
	}
	return v.Int64 == 1, nil
}

// TrySessionLock is GET_LOCK with timeout 0 and CONNECTION_ID(), in one statement; s
// sets nothing (see ApplyLockSession).
func (Driver) TrySessionLock(ctx context.Context, c bun.IConn, _ driver.LockSession, class, key int32) (int, bool, error) {
	var id int
	var got sql.NullInt64
	if err := c.QueryRowContext(ctx, "SELECT CONNECTION_ID(), GET_LOCK("+lockNameSQL(class, key)+", 0)").Scan(&id, &got); err != nil {
		return 0, false, err
	}
	granted, err := grantedLock(got, class, key)
	return id, granted, err
}

// waitStatement is WaitSessionLock's statement: GET_LOCK for a year, with the
// statement time limits lifted (MariaDB's max_statement_time, in a comment only MariaDB
// runs; MySQL's max_execution_time, in a hint MariaDB 10 ignores), so a limit a DSN or
// the server sets cannot end a wait in line. LockLine finds waiters by its text.
func waitStatement(class, key int32) string {
	return fmt.Sprintf("/*M! SET STATEMENT max_statement_time=0 FOR */ SELECT /*+ MAX_EXECUTION_TIME(0) */ GET_LOCK(%s, %d)", lockNameSQL(class, key), waitForever)
}

// WaitSessionLock is the blocking GET_LOCK. The server serves its waiters in the order
// they asked; the caller ends the wait with CancelStatement (KILL QUERY), after which
// GET_LOCK returns NULL, an error here.
func (Driver) WaitSessionLock(ctx context.Context, c bun.IConn, class, key int32) error {
	var got sql.NullInt64
	if err := c.QueryRowContext(ctx, waitStatement(class, key)).Scan(&got); err != nil {
		return err
	}
	granted, err := grantedLock(got, class, key)
	if err == nil && !granted {
		err = fmt.Errorf("GET_LOCK of %s timed out after %d s", lockKeyText(class, key), waitForever)
	}
	return err
}

// TryFirstSessionLock is one CASE expression: its WHEN branches run in order, each only
// if the ones before it did not take their key, so it takes the first free key and no
// other; only the chosen THEN runs, and it gives back (leaveClass, leaveKey). The result
// packs both: 2*i + (1 when the leave released a lock held), or -1 with nothing taken.
func (Driver) TryFirstSessionLock(ctx context.Context, c bun.IConn, class int32, keys []int32, leaveClass, leaveKey int32) (int, bool, error) {
	var b strings.Builder
	b.WriteString("SELECT CASE")
	leave := "COALESCE(RELEASE_LOCK(" + lockNameSQL(leaveClass, leaveKey) + "), 0)"
	for i, k := range keys {
		fmt.Fprintf(&b, " WHEN GET_LOCK(%s, 0) = 1 THEN %d + %s", lockNameSQL(class, k), 2*i, leave)
	}
	b.WriteString(" ELSE -1 END")
	var packed int
	if err := c.QueryRowContext(ctx, b.String()).Scan(&packed); err != nil {
		return -1, false, err
	}
	if packed < 0 {
		return -1, false, nil
	}
	return packed / 2, packed%2 == 1, nil
}

// ReleaseSessionLock is RELEASE_LOCK: 1 when c held the lock (one level of it, when
// taken twice); 0 (another session holds it) and NULL (nobody does) are false.
func (Driver) ReleaseSessionLock(ctx context.Context, c bun.IConn, class, key int32) (bool, error) {
	var released sql.NullInt64
	if err := c.QueryRowContext(ctx, "SELECT RELEASE_LOCK("+lockNameSQL(class, key)+")").Scan(&released); err != nil {
		return false, err
	}
	return released.Valid && released.Int64 == 1, nil
}

// Backend is CONNECTION_ID(), the id KILL QUERY and the lock views name a session by.
func (Driver) Backend(ctx context.Context, c bun.IConn) (int, error) {
	var id int
	err := c.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id)
	return id, err
}
