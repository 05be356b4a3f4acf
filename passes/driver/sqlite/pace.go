package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes/driver"
)

// Blocked is 0: SQLite keeps no view of who waits on whom.
func (Driver) Blocked(context.Context, bun.IDB, int) (int, error) { return 0, nil }

// BusySessions reports none: SQLite has no sessions another connection can see.
func (Driver) BusySessions(context.Context, bun.IDB, int) (int, bool, error) { return 0, false, nil }

// CommitProbe reports none: a SQLite writer has the file to itself, so no commit of
// the sweep delays another's.
func (Driver) CommitProbe(context.Context, bun.IDB) (bool, error) { return false, nil }

// ReplicaLag reports no replica.
func (Driver) ReplicaLag(context.Context, bun.IDB) (time.Duration, bool, error) {
	return 0, false, nil
}

// ListsReplicas is false: an SQLite file has no replicas.
func (Driver) ListsReplicas() bool { return false }

// ReplicaStatus is unsupported: an SQLite file has no replicas.
func (Driver) ReplicaStatus(context.Context, bun.IDB) (driver.ReplicaStatus, error) {
	return driver.ReplicaStatus{}, fmt.Errorf("sqlite replicas: %w", driver.ErrUnsupported)
}
