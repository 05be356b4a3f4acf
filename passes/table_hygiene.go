package passes

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"
)

// Hygiene after a big sweep. Deleting a large share of a table leaves the planner's
// statistics describing rows that are gone (so it may pick a plan for a table ten times
// its size) and leaves the space of the dead rows to autovacuum, which starts only past
// its own thresholds. A sweep that deleted at least TableSpec.AnalyzeAfterShare of the
// rows the table held when it began refreshes the statistics before it gives its
// connection back (ANALYZE on PostgreSQL, PRAGMA optimize on SQLite) and, with
// TableSpec.VacuumAfter, reclaims the space too (plain VACUUM, never FULL, which would
// lock the table; on SQLite PRAGMA incremental_vacuum when the database was created with
// auto_vacuum = incremental, and nothing otherwise, since a plain VACUUM there rewrites
// the whole file under an exclusive lock).

// DefaultAnalyzeAfterShare is TableSpec.AnalyzeAfterShare when it is zero: a sweep that
// deleted a tenth of the table, the share at which PostgreSQL's own autoanalyze starts
// by default (autovacuum_analyze_scale_factor 0.1), analyzes at once instead of waiting
// for autovacuum to notice.
const DefaultAnalyzeAfterShare = 0.1

// DefaultVacuumTimeout is TableSpec.VacuumTimeout when it is zero.
const DefaultVacuumTimeout = 10 * time.Minute

// analyzeShare is the share in force, or a negative number for never.
func (s TableSpec) analyzeShare() float64 {
	if s.AnalyzeAfterShare == 0 {
		return DefaultAnalyzeAfterShare
	}
	return s.AnalyzeAfterShare
}

func (s TableSpec) vacuumTimeout() time.Duration {
	if s.VacuumTimeout <= 0 {
		return DefaultVacuumTimeout
	}
	return s.VacuumTimeout
}

// readTableSize records, before the sweep's first delete, the driver's estimate of the
// rows the table holds (PostgreSQL's pg_class.reltuples; -1 when never analyzed). A
// driver that keeps none leaves sizeRead false, and afterSweep counts the rows left.
func (s *tableSweep) readTableSize(ctx context.Context, db bun.IDB) error {
	if s.t.spec.analyzeShare() < 0 {
		return nil
	}
	n, ok, err := s.t.drv.SizeEstimate(ctx, db, s.t.spec.Table)
	if err != nil {
		return fmt.Errorf("read the table's size estimate: %w", err)
	}
	s.sizeBefore, s.sizeRead = n, ok
	return nil
}

// bigSweep reports whether the sweep deleted enough of the table for hygiene; sizeAfter
// is the rows left when the size before is not known (SQLite).
func (s *tableSweep) bigSweep(sizeAfter float64) bool {
	share := s.t.spec.analyzeShare()
	if share < 0 || s.deleted == 0 {
		return false
	}
	before := s.sizeBefore
	if !s.sizeRead {
		before = sizeAfter + float64(s.deleted)
	}
	if before <= 0 { // never analyzed: the statistics are missing, not just stale
		return true
	}
	return float64(s.deleted) >= share*before
}

// afterSweep runs the hygiene of a big sweep, bounded by the vacuum timeout, on the
// sweep's own pinned connection (its session settings already reset) when it has one,
// or on the database.
func (s *tableSweep) afterSweep(c *bun.Conn) error {
	t := s.t
	if t.spec.analyzeShare() < 0 || s.deleted == 0 {
		return nil
	}
	timeout := t.spec.vacuumTimeout()
	ctx, cancel := context.WithTimeout(context.Background(), timeout+5*time.Second) // the server's timeout fires first
	defer cancel()
	// A pinning driver's hygiene sets session settings (its statement timeout), so it
	// runs only on the sweep's own connection, which Close resets after it; never on a
	// pool connection another user would inherit them on.
	var on bun.IDB = t.db
	switch {
	case c != nil:
		on = *c
	case t.drv.PinsSweep():
		return nil
	}
	var left int64
	if !s.sizeRead {
		if err := t.db.NewSelect().TableExpr("?", ident(t.spec.Table)).ColumnExpr("count(*)").Scan(ctx, &left); err != nil {
			return fmt.Errorf("pass %q: count the rows left for hygiene: %w", t.name, err)
		}
	}
	if !s.bigSweep(float64(left)) {
		return nil
	}
	if err := t.drv.Tidy(ctx, on, ident(t.spec.Table), t.spec.VacuumAfter, timeout); err != nil {
		return fmt.Errorf("pass %q: hygiene after a big sweep: %w", t.name, err)
	}
	return nil
}

// VacuumStats is what PostgreSQL's cumulative statistics say of a table's dead rows
// and of its last vacuum and analyze; a zero time is never (since the statistics were
// last reset).
type VacuumStats struct {
	DeadTuples      int64
	LastAutovacuum  time.Time
	LastVacuum      time.Time
	LastAutoanalyze time.Time
	LastAnalyze     time.Time
}

// VacuumStats reads the driver's upkeep statistics of the table (PostgreSQL's
// pg_stat_all_tables). ok is false on a driver that keeps none (SQLite), and for a table
// the statistics do not know (yet).
func (t *Table) VacuumStats(ctx context.Context) (stats VacuumStats, ok bool, err error) {
	v, ok, err := t.drv.VacuumStats(ctx, t.db, t.spec.Table)
	if err != nil {
		return VacuumStats{}, false, fmt.Errorf("pass %q: read the table's vacuum statistics: %w", t.name, err)
	}
	if !ok {
		return VacuumStats{}, false, nil
	}
	at := func(p *time.Time) time.Time {
		if p == nil {
			return time.Time{}
		}
		return *p
	}
	return VacuumStats{DeadTuples: v.Dead, LastAutovacuum: at(v.LastAutovacuum), LastVacuum: at(v.LastVacuum),
		LastAutoanalyze: at(v.LastAutoanalyze), LastAnalyze: at(v.LastAnalyze)}, true, nil
}
