package ledger

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"sync"
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
// One sweep (a cleanup cycle) goes on until no group has an eligible run left, the
// groups taking turns batch by batch so a large group cannot starve another. A group is
// done when a batch loads fewer ids than the batch size, whatever that batch deleted:
// another node deleting the same rows first leaves this one 0 deleted of a full batch,
// which says nothing about what is left.
//
// Cleanup is a passes.Pass: register it with Registration. The runtime hands it the
// default group's cutoff, from which it derives every group's, once per sweep.
type Cleanup struct {
	ledger  *Ledger
	plan    *Plan
	aliases map[string]string
	warn    func(string)

	mu     sync.Mutex
	warned map[string]bool
}

// NewCleanup returns the cleanup of l under plan.
func NewCleanup(l *Ledger, plan *Plan) *Cleanup { return &Cleanup{ledger: l, plan: plan} }

// WithAliases tells the cleanup which names are one pass (alias -> canonical, as
// AliasesFor returns for the runtime's registered names). Every sweep merges a pass
// listed under both with two retentions to the longer one and warns, the fallback for a
// startup where Plan.CheckAliases was not run. Without it, the sweep relates the plan's
// own names the same way (AliasesFor over them).
func (c *Cleanup) WithAliases(aliases map[string]string) *Cleanup {
	c.aliases = aliases
	return c
}

// WithWarnings sends the cleanup's warnings to warn (each distinct warning once per
// Cleanup); without it they go to slog's default logger.
func (c *Cleanup) WithWarnings(warn func(string)) *Cleanup {
	c.warn = warn
	return c
}

// cleanupUnbounded is the cleanup's MaxBatchesPerSweep: a cycle ends when nothing
// eligible is left, never at a batch count. It always ends: every batch moves a group's
// id cursor forward or finishes that group, and the cutoffs are fixed for the cycle.
const cleanupUnbounded = math.MaxInt

// Registration returns the cleanup as a pass registration on its internal name, sweeping
// at startup and every interval.
func (c *Cleanup) Registration() passes.Registration {
	opts := passes.DefaultOptions()
	opts.RetentionPeriod = passes.Retain(c.plan.Retention)
	opts.SweepInterval = c.plan.Interval
	opts.BatchSize = c.plan.BatchSize
	opts.MaxStartupStagger = 0
	opts.MaxBatchesPerSweep = cleanupUnbounded
	return passes.Registration{Name: NameMetadataCleanup, Target: c.ledger.table("metadata"), Options: opts, New: c.Factory()}
}

// Factory builds one sweep of the cleanup.
func (c *Cleanup) Factory() passes.Factory {
	return func(context.Context) (passes.Pass, error) { return &cleanupSweep{c: c}, nil }
}

func (c *Cleanup) warnOnce(msg string) {
	c.mu.Lock()
	seen := c.warned[msg]
	if c.warned == nil {
		c.warned = map[string]bool{}
	}
	c.warned[msg] = true
	c.mu.Unlock()
	if seen {
		return
	}
	if c.warn != nil {
		c.warn(msg)
		return
	}
	slog.Warn(msg)
}

func (c *Cleanup) aliasesOf(p *Plan) map[string]string {
	if c.aliases != nil {
		return c.aliases
	}
	var names []string
	for _, g := range p.Groups {
		names = append(names, g.Names...)
	}
	slices.Sort(names)
	return AliasesFor(names)
}

// sweepGroup is one group of a cleanup cycle: its names, its cutoff and its id cursor.
type sweepGroup struct {
	names  []string
	cutoff time.Time
	after  int64
	done   bool
}

type cleanupSweep struct {
	c      *Cleanup
	groups []*sweepGroup // fixed at the sweep's first batch
	turn   int           // the group whose turn is next
}

// PurgeBatch deletes one batch of the group whose turn it is and passes the turn on.
// While any group is not done it asks the runtime to go on, however many rows this
// batch deleted.
func (s *cleanupSweep) PurgeBatch(ctx context.Context, batchSize int, olderThan time.Time) (int, error) {
	if s.groups == nil {
		if err := s.fixGroups(ctx, olderThan); err != nil {
			return 0, err
		}
	}
	g := s.next()
	if g == nil {
		return 0, nil
	}
	s.turn++
	ids, err := s.c.ledger.eligible(ctx, s.c.ledger.db, g.names, g.cutoff, g.after, batchSize)
	if err != nil {
		return 0, err
	}
	if len(ids) > 0 {
		g.after = ids[len(ids)-1]
	}
	g.done = len(ids) < batchSize
	deleted, err := s.c.ledger.deleteOrBisect(ctx, ids)
	if err != nil {
		return deleted, err
	}
	if s.next() != nil {
		passes.ReportMoreWaiting(ctx)
	}
	return deleted, nil
}

// next returns the group whose turn it is, passing over the groups that are done, or nil
// when every group is done.
func (s *cleanupSweep) next() *sweepGroup {
	for range s.groups {
		g := s.groups[s.turn%len(s.groups)]
		if !g.done {
			return g
		}
		s.turn++
	}
	return nil
}

// fixGroups derives every group's cutoff from the default one the runtime handed over
// (now = olderThan + the configured default): the stored override moves the default
// group only, a pass listed under two related names keeps the longer of its two
// retentions (with a warning), and groups that end up with one cutoff are swept as one.
func (s *cleanupSweep) fixGroups(ctx context.Context, olderThan time.Time) error {
	now := olderThan.Add(s.c.plan.Retention)
	override, err := s.c.ledger.CleanupRetentionOverride(ctx)
	if err != nil {
		return err
	}
	effective := s.c.plan.withDefault(override)
	effective = effective.MergeAliases(s.c.aliasesOf(effective), s.c.warnOnce)
	byCutoff := map[time.Duration]*sweepGroup{}
	s.groups = []*sweepGroup{}
	for _, g := range effective.Groups {
		sg, ok := byCutoff[g.Retention]
		if !ok {
			sg = &sweepGroup{cutoff: now.Add(-g.Retention)}
			byCutoff[g.Retention] = sg
			s.groups = append(s.groups, sg)
		}
		sg.names = append(sg.names, g.Names...)
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
		Where("? = ?", l.keyColumn(), SettingCleanupRetention).Scan(ctx, &values); err != nil {
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

// CleanupRetentionSetting returns the stored override of the cleanup's default retention
// and when it was last changed; ok is false when none is stored.
func (l *Ledger) CleanupRetentionSetting(ctx context.Context) (d time.Duration, updated time.Time, ok bool, err error) {
	var rows []struct {
		Value   string    `bun:"value"`
		Updated time.Time `bun:"updated_time"`
	}
	if err := l.db.NewSelect().TableExpr("?", bun.Ident(l.table("settings"))).Column("value", "updated_time").
		Where("? = ?", l.keyColumn(), SettingCleanupRetention).Scan(ctx, &rows); err != nil {
		return 0, time.Time{}, false, fmt.Errorf("ledger: read settings: %w", err)
	}
	if len(rows) == 0 {
		return 0, time.Time{}, false, nil
	}
	d, perr := time.ParseDuration(rows[0].Value)
	if perr != nil || d <= 0 {
		return 0, rows[0].Updated, true, fmt.Errorf("ledger: setting %s = %q is not a positive duration", SettingCleanupRetention, rows[0].Value)
	}
	return d, rows[0].Updated, true, nil
}

// SetCleanupRetention stores the override of the cleanup's default retention.
func (l *Ledger) SetCleanupRetention(ctx context.Context, d time.Duration, at time.Time) error {
	if d <= 0 {
		return fmt.Errorf("%s must be positive, got %v", SettingCleanupRetention, d)
	}
	if err := l.storeSetting(ctx, SettingCleanupRetention, d.String(), at); err != nil {
		return fmt.Errorf("ledger: store %s: %w", SettingCleanupRetention, err)
	}
	return nil
}
