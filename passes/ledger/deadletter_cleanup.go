package ledger

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes"
)

// DefaultDeadLetterRetention is how long a resolved dead letter is kept.
const DefaultDeadLetterRetention = 7 * 24 * time.Hour

// DeadLetterCleanup prunes dead letters resolved (retried) before the cutoff. An
// unresolved one is kept however old: it is a pass nobody has looked at yet. Once a dead
// letter goes, its failed run is no longer evidence, and the metadata cleanup prunes it
// like any other run.
type DeadLetterCleanup struct {
	ledger    *Ledger
	retention time.Duration
	interval  time.Duration
}

// NewDeadLetterCleanup returns the cleanup of l's resolved dead letters older than
// retention (0: DefaultDeadLetterRetention), run every interval (0: hourly).
func NewDeadLetterCleanup(l *Ledger, retention, interval time.Duration) *DeadLetterCleanup {
	if retention <= 0 {
		retention = DefaultDeadLetterRetention
	}
	if interval <= 0 {
		interval = time.Hour
	}
	return &DeadLetterCleanup{ledger: l, retention: retention, interval: interval}
}

// Registration returns the cleanup as a pass on its internal name.
func (c *DeadLetterCleanup) Registration() passes.Registration {
	opts := passes.DefaultOptions()
	opts.RetentionPeriod = passes.Retain(c.retention)
	opts.SweepInterval = c.interval
	opts.MaxStartupStagger = 0
	return passes.Registration{Name: NameDeadLetterCleanup, Target: c.ledger.table("dead_letter"), Options: opts,
		New: passes.Reuse(passes.PassFunc(c.purgeBatch))}
}

func (c *DeadLetterCleanup) purgeBatch(ctx context.Context, batchSize int, olderThan time.Time) (int, error) {
	l := c.ledger
	batch := l.db.NewSelect().TableExpr("?", bun.Ident(l.table("dead_letter"))).Column("id").
		Where("resolved_time IS NOT NULL").Where("resolved_time < ?", olderThan.UTC()).
		OrderExpr("id").Limit(int64(batchSize))
	// The batch is read through a derived table: MySQL allows no LIMIT in an IN subquery
	// (error 1235) and no subquery on the table a DELETE deletes from (1093), but
	// materialises a derived table first; PostgreSQL and SQLite read it the same.
	sub := l.db.NewSelect().TableExpr("(?) AS batch", batch).Column("id")
	res, err := l.db.NewDelete().TableExpr("?", bun.Ident(l.table("dead_letter"))).Where("id IN (?)", sub).Exec(ctx)
	if err != nil {
		return 0, fmt.Errorf("ledger: dead-letter cleanup: %w", err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}
