package ledger

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes"
)

// SettingCleanupRetention is the settings key of the runtime override of the cleanup's
// default retention (`retention settings set metadata_cleanup.retention_period 2h`).
const SettingCleanupRetention = "metadata_cleanup.retention_period"

// Cleanup prunes the ledger as the metadata cleanup does: a run is eligible when its name
// is in a group (internal names always are), it started before its group's cutoff, its
// state is terminal (Pending and InProgress never go, whatever their age), no queued
// work-queue entry still needs it and no dead letter records it as its failed run.
// Each batch, in one transaction: load the ids, delete their work-queue rows and log rows,
// clear dead_letter.retry_metadata_id and child metadata.parent_id pointing at them (the
// dead letters and the children are kept), delete the runs by id. A batch that fails is
// bisected; the offending run is reported skipped and tried again next cycle. There is no
// locking: two nodes cleaning at once each delete what is still there.
//
// Cleanup is a passes.Pass: register it with Registration. The runtime hands it the
// default group's cutoff, from which it derives every group's, once per sweep.
type Cleanup struct {
	ledger *Ledger
	plan   *Plan
}

// NewCleanup returns the cleanup of l under plan.
func NewCleanup(l *Ledger, plan *Plan) *Cleanup { return &Cleanup{ledger: l, plan: plan} }

// Registration returns the cleanup as a pass registration on its internal name, sweeping
// at startup and every interval.
func (c *Cleanup) Registration() passes.Registration {
	opts := passes.DefaultOptions()
	opts.RetentionPeriod = passes.Retain(c.plan.Retention)
	opts.SweepInterval = c.plan.Interval
	opts.BatchSize = c.plan.BatchSize
	opts.MaxStartupStagger = 0
	return passes.Registration{Name: NameMetadataCleanup, Target: c.ledger.table("metadata"), Options: opts, New: c.Factory()}
}

// Factory builds one sweep of the cleanup.
func (c *Cleanup) Factory() passes.Factory {
	return func(context.Context) (passes.Pass, error) { return &cleanupSweep{c: c}, nil }
}

type cleanupSweep struct {
	c       *Cleanup
	cutoffs []time.Time // per group, fixed at the sweep's first batch
	group   int
	after   int64 // id cursor within the current group
}

// PurgeBatch deletes one batch of the current group; a short batch moves on to the next
// group and, while one remains, asks the runtime to go on.
func (s *cleanupSweep) PurgeBatch(ctx context.Context, batchSize int, olderThan time.Time) (int, error) {
	if s.cutoffs == nil {
		if err := s.fixCutoffs(ctx, olderThan); err != nil {
			return 0, err
		}
	}
	if s.group >= len(s.c.plan.Groups) {
		return 0, nil
	}
	g := s.c.plan.Groups[s.group]
	ids, err := s.c.ledger.eligible(ctx, s.c.ledger.db, g.Names, s.cutoffs[s.group], s.after, batchSize)
	if err != nil {
		return 0, err
	}
	if len(ids) > 0 {
		s.after = ids[len(ids)-1]
	}
	deleted, err := s.c.ledger.deleteOrBisect(ctx, ids)
	if err != nil {
		return deleted, err
	}
	if len(ids) < batchSize {
		s.group, s.after = s.group+1, 0
		if s.group < len(s.c.plan.Groups) {
			passes.ReportMoreWaiting(ctx)
		}
	}
	return deleted, nil
}

// fixCutoffs derives every group's cutoff from the default one the runtime handed over
// (now = olderThan + the configured default), applying a stored override to the default
// group only.
func (s *cleanupSweep) fixCutoffs(ctx context.Context, olderThan time.Time) error {
	now := olderThan.Add(s.c.plan.Retention)
	override, err := s.c.ledger.CleanupRetentionOverride(ctx)
	if err != nil {
		return err
	}
	for _, g := range s.c.plan.Groups {
		r := g.Retention
		if g.Default && override > 0 {
			r = override
		}
		s.cutoffs = append(s.cutoffs, now.Add(-r))
	}
	return nil
}

// eligible returns up to n ids after `after` of runs named in names, started before
// cutoff, in a terminal state, needed by no queued work and recorded by no dead letter.
func (l *Ledger) eligible(ctx context.Context, db bun.IDB, names []string, cutoff time.Time, after int64, n int) ([]int64, error) {
	var ids []int64
	err := l.eligibleQuery(db, names, cutoff).Where("m.id > ?", after).OrderExpr("m.id").Limit(int64(n)).ColumnExpr("m.id").Scan(ctx, &ids)
	if err != nil {
		return nil, fmt.Errorf("ledger cleanup: select batch: %w", err)
	}
	return ids, nil
}

func (l *Ledger) eligibleQuery(db bun.IDB, names []string, cutoff time.Time) *bun.SelectQuery {
	return db.NewSelect().TableExpr("? AS m", bun.Ident(l.table("metadata"))).
		Where("m.name IN (?)", bun.List(names)).
		Where("m.start_time < ?", cutoff.UTC()).
		Where("m.state IN (?)", bun.List([]State{Completed, Failed, Cancelled})).
		Where("NOT EXISTS (SELECT 1 FROM ? AS w WHERE w.metadata_id = m.id AND w.state = ?)", bun.Ident(l.table("work_queue")), WorkQueued).
		Where("NOT EXISTS (SELECT 1 FROM ? AS d WHERE d.metadata_id = m.id)", bun.Ident(l.table("dead_letter")))
}

// WorkQueued is the work-queue state of a requested sweep nobody has claimed yet.
const WorkQueued = "Queued"

func (l *Ledger) deleteOrBisect(ctx context.Context, ids []int64) (int, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	n, err := l.deleteRuns(ctx, ids)
	if err == nil {
		return n, nil
	}
	if ctx.Err() != nil || !passes.IsRowSpecific(err) {
		return 0, fmt.Errorf("ledger cleanup: delete batch: %w", err)
	}
	if len(ids) == 1 {
		passes.ReportSkipped(ctx, ids[0], err)
		return 0, nil
	}
	mid := len(ids) / 2
	a, err := l.deleteOrBisect(ctx, ids[:mid])
	if err != nil {
		return a, err
	}
	b, err := l.deleteOrBisect(ctx, ids[mid:])
	return a + b, err
}

// deleteRuns deletes the runs and what they own, in the order the references need.
func (l *Ledger) deleteRuns(ctx context.Context, ids []int64) (int, error) {
	var deleted int
	err := passes.TxUnitOfWork{DB: l.db}.Execute(ctx, func(ctx context.Context) error {
		tx := passes.DB(ctx, l.db)
		in := bun.List(ids)
		steps := []*bun.RawQuery{
			tx.NewRaw("DELETE FROM ? WHERE metadata_id IN (?)", bun.Ident(l.table("work_queue")), in),
			tx.NewRaw("DELETE FROM ? WHERE metadata_id IN (?)", bun.Ident(l.table("log")), in),
			tx.NewRaw("UPDATE ? SET retry_metadata_id = NULL WHERE retry_metadata_id IN (?)", bun.Ident(l.table("dead_letter")), in),
			tx.NewRaw("UPDATE ? SET parent_id = NULL WHERE parent_id IN (?)", bun.Ident(l.table("metadata")), in),
		}
		for _, q := range steps {
			if _, err := q.Exec(ctx); err != nil {
				return err
			}
		}
		res, err := tx.NewRaw("DELETE FROM ? WHERE id IN (?)", bun.Ident(l.table("metadata")), in).Exec(ctx)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		deleted = int(n)
		return err
	})
	return deleted, err
}

// CleanupRetentionOverride returns the runtime override of the cleanup's default
// retention, or 0 when none is stored. Every node reads it from the database, so one
// `settings set` moves them all.
func (l *Ledger) CleanupRetentionOverride(ctx context.Context) (time.Duration, error) {
	var values []string
	if err := l.db.NewSelect().TableExpr("?", bun.Ident(l.table("settings"))).Column("value").
		Where("key = ?", SettingCleanupRetention).Scan(ctx, &values); err != nil {
		return 0, fmt.Errorf("ledger: read settings: %w", err)
	}
	if len(values) == 0 {
		return 0, nil
	}
	d, err := time.ParseDuration(values[0])
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("ledger: setting %s = %q is not a positive duration", SettingCleanupRetention, values[0])
	}
	return d, nil
}

// SetCleanupRetention stores the override of the cleanup's default retention.
func (l *Ledger) SetCleanupRetention(ctx context.Context, d time.Duration, at time.Time) error {
	if d <= 0 {
		return fmt.Errorf("%s must be positive, got %v", SettingCleanupRetention, d)
	}
	_, err := l.db.NewRaw("INSERT INTO ? (key, value, updated_time) VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_time = EXCLUDED.updated_time",
		bun.Ident(l.table("settings")), SettingCleanupRetention, d.String(), at.UTC()).Exec(ctx)
	if err != nil {
		return fmt.Errorf("ledger: store %s: %w", SettingCleanupRetention, err)
	}
	return nil
}
