package mysql

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/schema"

	"github.com/retentionkit/retention/passes/driver"
)

// SizeEstimate is information_schema.TABLES' TABLE_ROWS, InnoDB's sampled estimate (-1
// when the server has none for the table).
func (Driver) SizeEstimate(ctx context.Context, db bun.IDB, table string) (float64, bool, error) {
	s, name := schemaOf(table)
	var n float64
	err := db.NewRaw(`SELECT COALESCE((SELECT TABLE_ROWS FROM information_schema.TABLES
		WHERE TABLE_SCHEMA = COALESCE(?, DATABASE()) AND TABLE_NAME = ?), -1)`, s, name).Scan(ctx, &n)
	return n, err == nil, err
}

// Tidy runs ANALYZE TABLE, which refreshes InnoDB's index statistics from a few sampled
// pages and is quick. It does nothing more with vacuum: InnoDB purges deleted rows by
// itself, and the only way to give pages back (OPTIMIZE TABLE) rebuilds the whole
// table, which no statement timeout bounds. The context bounds the statement.
func (Driver) Tidy(ctx context.Context, db bun.IDB, table schema.QueryAppender, _ bool, _ time.Duration) error {
	if _, err := db.ExecContext(ctx, "ANALYZE TABLE ?", table); err != nil {
		return fmt.Errorf("ANALYZE TABLE: %w", err)
	}
	return nil
}

// VacuumStats has none: InnoDB keeps no dead-row counts or vacuum times.
func (Driver) VacuumStats(context.Context, bun.IDB, string) (driver.VacuumStats, bool, error) {
	return driver.VacuumStats{}, false, nil
}
