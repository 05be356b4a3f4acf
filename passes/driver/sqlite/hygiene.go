package sqlite

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/schema"

	"github.com/retentionkit/retention/passes/driver"
)

// SizeEstimate has none: SQLite's statistics are no row count to trust, so the sweep
// counts the rows left.
func (Driver) SizeEstimate(context.Context, bun.IDB, string) (float64, bool, error) {
	return 0, false, nil
}

// Tidy runs PRAGMA optimize, which re-analyzes the tables whose statistics it judges
// stale (the 0x10000 bit makes it look at every table, not only those this connection
// queried), and with vacuum an incremental vacuum when the database is in that mode.
// The pragmas run on one connection of db; the context bounds them.
func (Driver) Tidy(ctx context.Context, db bun.IDB, _ schema.QueryAppender, vacuum bool, _ time.Duration) error {
	var on bun.IConn = db
	if p, ok := db.(*bun.DB); ok {
		c, err := p.Conn(ctx)
		if err != nil {
			return err
		}
		defer c.Close()
		on = c
	}
	if _, err := on.ExecContext(ctx, "PRAGMA optimize=0x10002"); err != nil {
		return fmt.Errorf("PRAGMA optimize: %w", err)
	}
	if !vacuum {
		return nil
	}
	var mode int
	if err := on.QueryRowContext(ctx, "PRAGMA auto_vacuum").Scan(&mode); err != nil {
		return fmt.Errorf("read auto_vacuum: %w", err)
	}
	if mode != 2 { // 2 = incremental; none (0) or full (1) have nothing to do here
		return nil
	}
	// The pragma frees pages as it is stepped: read it to the end, or only the first
	// page goes back.
	rows, err := on.QueryContext(ctx, "PRAGMA incremental_vacuum")
	if err == nil {
		for rows.Next() {
		}
		err = errors.Join(rows.Err(), rows.Close())
	}
	if err != nil {
		return fmt.Errorf("PRAGMA incremental_vacuum: %w", err)
	}
	return nil
}

// VacuumStats has none: SQLite keeps no such statistics.
func (Driver) VacuumStats(context.Context, bun.IDB, string) (driver.VacuumStats, bool, error) {
	return driver.VacuumStats{}, false, nil
}
