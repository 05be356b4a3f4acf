package passes

import (
	"context"
	"errors"
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

// readTableSize records, before the sweep's first delete, how many rows PostgreSQL
// estimates the table holds (pg_class.reltuples, which ANALYZE and VACUUM keep; -1 when
// neither has run yet). SQLite counts at the end instead (see afterSweep).
func (s *tableSweep) readTableSize(ctx context.Context, db bun.IDB) error {
	if !s.t.postgres || s.t.spec.analyzeShare() < 0 {
		return nil
	}
	var n float64
	err := db.NewRaw("SELECT coalesce((SELECT reltuples FROM pg_class WHERE oid = to_regclass(?)), -1)", s.t.regclass()).Scan(ctx, &n)
	if err != nil {
		return fmt.Errorf("read the table's size estimate: %w", err)
	}
	s.sizeBefore, s.sizeRead = n, true
	return nil
}

// regclass is the table's name as to_regclass reads it: quoted, so case and odd
// characters survive.
func (t *Table) regclass() string {
	return t.db.QueryGen().FormatQuery("?", ident(t.spec.Table))
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
// sweep's own connection (PostgreSQL; its session settings already reset) or on the
// database (SQLite).
func (s *tableSweep) afterSweep(c *bun.Conn) error {
	t := s.t
	if t.spec.analyzeShare() < 0 || s.deleted == 0 {
		return nil
	}
	timeout := t.spec.vacuumTimeout()
	ctx, cancel := context.WithTimeout(context.Background(), timeout+5*time.Second) // the server's timeout fires first
	defer cancel()
	if t.postgres {
		if c == nil || !s.bigSweep(0) {
			return nil
		}
		return t.pgHygiene(ctx, *c, timeout)
	}
	var left int64
	if err := t.db.NewSelect().TableExpr("?", ident(t.spec.Table)).ColumnExpr("count(*)").Scan(ctx, &left); err != nil {
		return fmt.Errorf("pass %q: count the rows left for hygiene: %w", t.name, err)
	}
	if !s.bigSweep(float64(left)) {
		return nil
	}
	return t.sqliteHygiene(ctx)
}

func (t *Table) pgHygiene(ctx context.Context, c bun.Conn, timeout time.Duration) error {
	if _, err := c.ExecContext(ctx, "SELECT set_config('statement_timeout', ?, false)", fmt.Sprint(statementTimeoutMillis(timeout))); err != nil {
		return fmt.Errorf("pass %q: hygiene: %w", t.name, err)
	}
	if _, err := c.ExecContext(ctx, "ANALYZE ?", ident(t.spec.Table)); err != nil {
		return fmt.Errorf("pass %q: ANALYZE after a big sweep: %w", t.name, err)
	}
	if t.spec.VacuumAfter {
		if _, err := c.ExecContext(ctx, "VACUUM ?", ident(t.spec.Table)); err != nil {
			return fmt.Errorf("pass %q: VACUUM after a big sweep: %w", t.name, err)
		}
	}
	return nil
}

func (t *Table) sqliteHygiene(ctx context.Context) error {
	// PRAGMA optimize re-analyzes the tables whose statistics it judges out of date (a
	// row count changed tenfold since the last ANALYZE, in SQLite 3.46); the 0x10000 bit
	// makes it look at every table, not only those this connection queried. One
	// connection keeps the pragmas on the same database handle.
	c, err := t.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("pass %q: hygiene: %w", t.name, err)
	}
	defer c.Close()
	if _, err := c.ExecContext(ctx, "PRAGMA optimize=0x10002"); err != nil {
		return fmt.Errorf("pass %q: PRAGMA optimize after a big sweep: %w", t.name, err)
	}
	if !t.spec.VacuumAfter {
		return nil
	}
	var mode int
	if err := c.QueryRowContext(ctx, "PRAGMA auto_vacuum").Scan(&mode); err != nil {
		return fmt.Errorf("pass %q: read auto_vacuum: %w", t.name, err)
	}
	if mode != 2 { // 2 = incremental; none (0) or full (1) have nothing to do here
		return nil
	}
	// The pragma frees pages as it is stepped: read it to the end, or only the first
	// page goes back.
	rows, err := c.QueryContext(ctx, "PRAGMA incremental_vacuum")
	if err == nil {
		for rows.Next() {
		}
		err = errors.Join(rows.Err(), rows.Close())
	}
	if err != nil {
		return fmt.Errorf("pass %q: PRAGMA incremental_vacuum after a big sweep: %w", t.name, err)
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

// VacuumStats reads the table's row of pg_stat_all_tables. ok is false on SQLite, which
// keeps no such statistics, and for a table the statistics do not know (yet).
func (t *Table) VacuumStats(ctx context.Context) (stats VacuumStats, ok bool, err error) {
	if !t.postgres {
		return VacuumStats{}, false, nil
	}
	var rows []struct {
		Dead            int64      `bun:"n_dead_tup"`
		LastAutovacuum  *time.Time `bun:"last_autovacuum"`
		LastVacuum      *time.Time `bun:"last_vacuum"`
		LastAutoanalyze *time.Time `bun:"last_autoanalyze"`
		LastAnalyze     *time.Time `bun:"last_analyze"`
	}
	err = t.db.NewRaw("SELECT n_dead_tup, last_autovacuum, last_vacuum, last_autoanalyze, last_analyze FROM pg_stat_all_tables WHERE relid = to_regclass(?)", t.regclass()).Scan(ctx, &rows)
	if err != nil {
		return VacuumStats{}, false, fmt.Errorf("pass %q: read the table's vacuum statistics: %w", t.name, err)
	}
	if len(rows) == 0 {
		return VacuumStats{}, false, nil
	}
	at := func(p *time.Time) time.Time {
		if p == nil {
			return time.Time{}
		}
		return *p
	}
	r := rows[0]
	return VacuumStats{DeadTuples: r.Dead, LastAutovacuum: at(r.LastAutovacuum), LastVacuum: at(r.LastVacuum),
		LastAutoanalyze: at(r.LastAutoanalyze), LastAnalyze: at(r.LastAnalyze)}, true, nil
}
