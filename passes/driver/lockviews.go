package driver

import (
	"context"
	"time"

	"github.com/uptrace/bun"
)

// LockViews read what the server shows of the session locks of Locks, held or waited
// for by any session on the database: who holds a sweep lock (status, /cluster, the
// error of a sweep that runs elsewhere), how many delete slots are in use and how many
// sessions are in the slots' line. The reference behaviour is PostgreSQL's, which reads
// its lock table (joined with its session list for the holder), limited to the current
// database, since advisory locks are per database. A
// database without session locks returns an error wrapping ErrLocksUnsupported.
type LockViews interface {
	// LockHolders returns the session holding each of (class, keys) that is granted
	// right now, by key; a key nobody holds is absent. Member is left empty (the caller
	// reads it from ApplicationName).
	LockHolders(ctx context.Context, db bun.IDB, class int32, keys []int32) (map[int32]LockHolder, error)
	// LocksHeld counts the locks among (class, keys) granted right now, to any session.
	LocksHeld(ctx context.Context, db bun.IDB, class int32, keys []int32) (int, error)
	// LockLine counts the sessions that hold lock (class, key) or wait for it.
	LockLine(ctx context.Context, db bun.IDB, class, key int32) (int, error)
}

// LockHolder is the session holding a lock, as the server shows it. It is the one
// definition of a lock holder (passes.LockHolderInfo is this type): the sweep lock's
// contention error, GET /cluster and the dashboard all carry it, so a field added here
// reaches every one of them. The JSON names are the admin API's.
type LockHolder struct {
	// PID is the holder's backend process.
	PID int `json:"pid"`
	// ApplicationName is the session's application name; Member is the member id read
	// from it when it is one of ours ("retention:<id>"), else empty.
	ApplicationName string `json:"application_name"`
	Member          string `json:"member,omitempty"`
	// ClientAddr is the client's address; empty over a Unix socket or when our role may
	// not see it.
	ClientAddr string `json:"client_addr,omitempty"`
	// BackendStart is when the holder's connection opened: the lock is at most that old,
	// and a connection reused from a pool may be older than its sweep. StateChange is
	// when the session last started or finished a statement, so an old StateChange on
	// an idle holder says its sweep is stuck between batches.
	BackendStart time.Time `json:"since,omitzero"`
	StateChange  time.Time `json:"state_change,omitzero"`
}
