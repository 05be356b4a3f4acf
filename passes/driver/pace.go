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
}
