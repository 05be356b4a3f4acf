package driver

import (
	"context"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/schema"
)

// Hygiene is the upkeep after a sweep that deleted a large share of a table. The
// reference behaviour is PostgreSQL's: the size is the planner's estimate read before the
// sweep (no count), and the table is analyzed, and vacuumed when asked, on the sweep's
// own connection, bounded by a statement timeout.
type Hygiene interface {
	// SizeEstimate is the planner's row estimate for table (-1 when never analyzed); ok
	// is false when the database keeps none, and the sweep counts the rows left instead.
	SizeEstimate(ctx context.Context, db bun.IDB, table string) (rows float64, ok bool, err error)
	// Tidy refreshes table's statistics and, with vacuum, gives its free pages back,
	// within timeout, on db (the sweep's pinned connection when Sessions.PinsSweep).
	Tidy(ctx context.Context, db bun.IDB, table schema.QueryAppender, vacuum bool, timeout time.Duration) error
	// VacuumStats reads table's upkeep statistics; ok is false when the database keeps
	// none, or none for this table yet.
	VacuumStats(ctx context.Context, db bun.IDB, table string) (VacuumStats, bool, error)
}

// VacuumStats are a table's upkeep statistics; a nil time is never.
type VacuumStats struct {
	Dead            int64
	LastAutovacuum  *time.Time
	LastVacuum      *time.Time
	LastAutoanalyze *time.Time
	LastAnalyze     *time.Time
}
