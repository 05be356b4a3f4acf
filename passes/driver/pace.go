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
}
