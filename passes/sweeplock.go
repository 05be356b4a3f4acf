package passes

import (
	"context"
	sqldriver "database/sql/driver"
	"errors"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes/driver"
)

// The session-lock classes retention uses: a lock is a (class, key) pair, PostgreSQL's
// two-key advisory locks (see the driver's Locks). The classes spell "rtn" followed by a number, so they
// stay apart from an application's own advisory locks (the one-key bigint form never
// conflicts with the two-key form, and another two-key user would have to pick these
// very numbers), and a key collision can only ever be between two of retention's own.
const (
	// SweepLockClass holds one lock per sweeping identity (a pass, or a drain helper
	// "name#k"), its key the identity's LockKey.
	SweepLockClass int32 = 0x72746e01
	// SlotLockClass holds the cluster-wide delete slots; see AdvisorySlots.
	SlotLockClass int32 = 0x72746e02
	// QueueLockClass holds the line in front of the delete slots; see AdvisorySlots.
	QueueLockClass int32 = 0x72746e03
)

// ErrRunningElsewhere says a sweep did not start because another session holds its
// identity's advisory lock: another member of the cluster is sweeping the same pass.
// It is not a failure: the sweep is being done, just not here. The error a sweep
// returns is an *ElsewhereError, which names the identity and, when PostgreSQL lets us
// read it, the holder.
var ErrRunningElsewhere = errors.New("running elsewhere")

// ErrLockLost says the connection holding a sweep's lock died between two batches, so
// another member may have taken the lock: the sweep stops before its next batch.
var ErrLockLost = errors.New("sweep lock lost")

// ErrClusterUnsupported says the database cannot give the cluster's guarantees: they
// need session locks that die with their connection (PostgreSQL 14 or later; MySQL 8.0
// or MariaDB 10.6 or later, not Galera). It is the driver seam's ErrLocksUnsupported,
// which a driver without session locks, or a server it refuses, returns.
var ErrClusterUnsupported = driver.ErrLocksUnsupported

// ElsewhereError is a sweep denied its lock. Holder is nil when the holder could not be
// read (it let go in the meantime, or the server hides it from our role).
type ElsewhereError struct {
	Identity string
	Holder   *LockHolderInfo
}

func (e *ElsewhereError) Error() string {
	msg := fmt.Sprintf("%q is running elsewhere: its advisory lock is held by another session", e.Identity)
	if h := e.Holder; h != nil {
		who := fmt.Sprintf("backend pid %d", h.PID)
		if h.Member != "" {
			who = fmt.Sprintf("member %s (%s)", h.Member, who)
		} else if h.ApplicationName != "" {
			who = fmt.Sprintf("%s (%s)", h.ApplicationName, who)
		}
		if h.ClientAddr != "" {
			who += " from " + h.ClientAddr
		}
		msg = fmt.Sprintf("%q is running elsewhere: its advisory lock is held by %s", e.Identity, who)
	}
	return msg
}

// Unwrap returns ErrRunningElsewhere, for errors.Is.
func (e *ElsewhereError) Unwrap() error { return ErrRunningElsewhere }

// LockKey is the key of identity's sweep lock: its FNV-32a hash, as PostgreSQL's int4.
// Two identities may share a key (about one pair in 2^32 / n^2 for n identities); the
// only effect is that their sweeps never overlap, as if they were one pass. A collision
// can make sweeps wait, never run twice at once.
func LockKey(identity string) int32 {
	h := fnv.New32a()
	_, _ = h.Write([]byte(identity))
	return int32(h.Sum32())
}

// SweepLockOptions make a sweep exclusive across every session on the database: its
// connection takes the session lock (SweepLockClass, LockKey(Identity)) without waiting
// (the driver's TrySessionLock) before the first batch and gives it back after the last,
// or the server drops it with the connection. A sweep whose lock another session holds
// ends with an *ElsewhereError before it deletes anything.
type SweepLockOptions struct {
	// Identity names what is exclusive: the pass's name, or a drain helper's "name#k".
	// Empty means the pass's name (Exclusive requires it).
	Identity string
	// Conn are the settings of the connection that holds the lock; its zero value takes
	// the defaults of SweepConnOptions.
	Conn SweepConnOptions
}

// CheckClusterSupport refuses a database the cluster's guards cannot run on: SQLite,
// PostgreSQL older than 14, or a MySQL/MariaDB server whose GET_LOCK is not exclusive
// (Galera, a session-multiplexing proxy). Its error wraps ErrClusterUnsupported and
// says which.
func CheckClusterSupport(ctx context.Context, db *bun.DB) error {
	d, err := DriverFor(db)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrClusterUnsupported, err)
	}
	if err := d.SessionLocks(); err != nil {
		return err
	}
	return d.CheckServer(ctx, db)
}

// sweepLockSupported refuses a sweep lock on a driver without session locks, the one
// check every way of taking the lock (WithSweepLock, ExclusiveWith) makes before
// pinSweep can be reached.
func sweepLockSupported(d driver.Driver) error {
	if err := d.SessionLocks(); err != nil {
		return fmt.Errorf("a sweep lock: %w", err)
	}
	return nil
}

// pinnedSweep is a connection pinned for one sweep, holding the sweep's lock when it
// has one.
type pinnedSweep struct {
	drv  driver.Driver
	conn bun.Conn
	pid  int
	lock *SweepLockOptions // nil: no lock held
}

// pinSweep takes a connection from db for a sweep, applies lock's connection settings
// and takes its lock, all in one round trip; with lock nil it only reads the backend
// pid. A denied lock is an *ElsewhereError, and the connection goes back to the pool
// holding nothing. It is the only place a sweep lock is taken: a Table's sweep
// (WithSweepLock) and an Exclusive pass both come here, and
// TestSweepLockTakenInOnePlace fails if another path calls the driver's TrySessionLock.
func pinSweep(ctx context.Context, d driver.Driver, db *bun.DB, lock *SweepLockOptions) (*pinnedSweep, error) {
	c, err := db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	p := &pinnedSweep{drv: d, conn: c}
	if lock == nil {
		if p.pid, err = d.Backend(ctx, c); err != nil {
			discard(c)
			return nil, err
		}
		return p, nil
	}
	var granted bool
	if p.pid, granted, err = d.TrySessionLock(ctx, c, lock.Conn.lockSession(), SweepLockClass, LockKey(lock.Identity)); err != nil {
		discard(c)
		return nil, fmt.Errorf("take the sweep lock of %q: %w", lock.Identity, err)
	}
	if !granted {
		denied := &ElsewhereError{Identity: lock.Identity}
		if holders, err := LockHolders(ctx, c, []string{lock.Identity}); err == nil {
			if h, ok := holders[lock.Identity]; ok {
				denied.Holder = &h
			}
		}
		_ = c.Close()
		return nil, denied
	}
	p.lock = lock
	return p, nil
}

// alive confirms the pinned connection still answers, so a lock it holds is still held.
func (p *pinnedSweep) alive(ctx context.Context) error {
	var one int
	if err := p.conn.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil {
		return fmt.Errorf("%w: the connection holding the lock of %q failed: %v", ErrLockLost, p.lock.Identity, err)
	}
	return nil
}

// release gives the lock back and the connection to the pool. A connection whose lock
// could not be given back is closed rather than pooled, so no idle pooled connection
// can keep a pass locked.
func (p *pinnedSweep) release() error {
	if p.lock == nil {
		return p.conn.Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	released, err := p.drv.ReleaseSessionLock(ctx, p.conn, SweepLockClass, LockKey(p.lock.Identity))
	if err != nil || !released {
		discard(p.conn)
		if err != nil {
			return fmt.Errorf("give back the sweep lock of %q (its connection is closed instead): %w", p.lock.Identity, err)
		}
		return nil
	}
	return p.conn.Close()
}

// discard closes c's underlying connection instead of returning it to the pool, so
// whatever the session held (locks, settings) ends with it.
func discard(c bun.Conn) {
	_ = c.Raw(func(any) error { return sqldriver.ErrBadConn })
	_ = c.Close()
}
