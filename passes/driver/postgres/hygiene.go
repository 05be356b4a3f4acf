package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/schema"

	"github.com/retentionkit/retention/passes/driver"
)

// SizeEstimate reads pg_class.reltuples, which ANALYZE and VACUUM keep (-1 before
// either ran).
func (Driver) SizeEstimate(ctx context.Context, db bun.IDB, table string) (float64, bool, error) {
	var n float64
	err := db.NewRaw("SELECT coalesce((SELECT reltuples FROM pg_class WHERE oid = to_regclass(?)), -1)", regclass(table)).Scan(ctx, &n)
	return n, err == nil, err
}

// Tidy runs ANALYZE, and VACUUM with vacuum, under a statement timeout on db, which is
// the sweep's own connection: ResetSession puts the timeout back.
func (d Driver) Tidy(ctx context.Context, db bun.IDB, table schema.QueryAppender, vacuum bool, timeout time.Duration) error {
	if _, err := db.ExecContext(ctx, "SELECT set_config('statement_timeout', ?, false)", fmt.Sprint(driver.TimeoutMillis(timeout))); err != nil {
		return err
	}
	if _, err := db.ExecContext(ctx, "ANALYZE ?", table); err != nil {
		return fmt.Errorf("ANALYZE: %w", err)
	}
	if vacuum {
		if _, err := db.ExecContext(ctx, "VACUUM ?", table); err != nil {
			return fmt.Errorf("VACUUM: %w", err)
		}
	}
	return nil
}

// VacuumStats reads the table's row of pg_stat_all_tables.
func (Driver) VacuumStats(ctx context.Context, db bun.IDB, table string) (driver.VacuumStats, bool, error) {
	var rows []struct {
		Dead            int64      `bun:"n_dead_tup"`
		LastAutovacuum  *time.Time `bun:"last_autovacuum"`
		LastVacuum      *time.Time `bun:"last_vacuum"`
		LastAutoanalyze *time.Time `bun:"last_autoanalyze"`
		LastAnalyze     *time.Time `bun:"last_analyze"`
	}
	err := db.NewRaw("SELECT n_dead_tup, last_autovacuum, last_vacuum, last_autoanalyze, last_analyze FROM pg_stat_all_tables WHERE relid = to_regclass(?)", regclass(table)).Scan(ctx, &rows)
	if err != nil || len(rows) == 0 {
		return driver.VacuumStats{}, false, err
	}
	r := rows[0]
	return driver.VacuumStats{Dead: r.Dead, LastAutovacuum: r.LastAutovacuum, LastVacuum: r.LastVacuum,
		LastAutoanalyze: r.LastAutoanalyze, LastAnalyze: r.LastAnalyze}, true, nil
}
