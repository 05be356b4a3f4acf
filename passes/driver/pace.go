package driver

import (
	"context"
	"time"

	"github.com/uptrace/bun"
)

// Pace are the signals the pacing reads from the database. A database that keeps no
// such statistics reports none (zero and false), and the pacing then runs on batch
// times alone; PostgreSQL reads its session and replication statistics views.
type Pace interface {
	// Blocked counts the sessions waiting on a lock backend holds.
	Blocked(ctx context.Context, db bun.IDB, backend int) (int, error)
	// ReplicaLag is the largest replication lag, and whether any replica reports one.
	ReplicaLag(ctx context.Context, db bun.IDB) (time.Duration, bool, error)
	// BusySessions counts the database's other sessions that are busy now (inside a
	// statement or an open transaction), leaving out the caller's own and backend (the
	// sweep's); false when the database shows no other sessions.
	BusySessions(ctx context.Context, db bun.IDB, backend int) (int, bool, error)
	// CommitProbe writes and commits the least the database lets it, as the workload's
	// transactions end, so the caller can time the commit's wait (most OLTP waits on its
	// commits' flushes, which no read sees); false when the database has no such probe.
	CommitProbe(ctx context.Context, db bun.IDB) (bool, error)
	// ListsReplicas reports whether the config lists the database's replicas for their
	// lag (database.replicas): true where the source keeps no lag of its replicas, so
	// each must be asked (MySQL, MariaDB); false where ReplicaLag reads it on the
	// primary (PostgreSQL) or there are none (SQLite), and a list is refused.
	ListsReplicas() bool
	// ReplicaStatus reads what replica, a handle on a listed replica, reports of its
	// own replication. It wraps ErrUnsupported where ListsReplicas is false.
	ReplicaStatus(ctx context.Context, replica bun.IDB) (ReplicaStatus, error)
}

// ReplicaStatus is what a replica says of its own replication.
type ReplicaStatus struct {
	// Replica is false when the server replicates from no source at all: the config
	// names a server that is not a replica.
	Replica bool
	// Replicating is false when replication is set up but stopped or broken, so the
	// server cannot tell its lag (MySQL shows it NULL): the pacing counts it lagging.
	Replicating bool
	// Lag is how far the replica is behind its source; meaningful when Replicating.
	Lag time.Duration
}
