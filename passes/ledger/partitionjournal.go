package ledger

import (
	"context"
	"fmt"
	"math"
	"sync/atomic"
	"time"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/core/clock"
	"github.com/retentionkit/retention/passes"
)

// PartitionRetirement is one row of the partition journal: a retirement a table pass
// began, what it was about to retire, and how it ended.
type PartitionRetirement struct {
	ID       int64  `bun:"id,pk,autoincrement"`
	PassName string `bun:"pass_name,notnull"`
	// NodeID is the node that retired it (Ledger.ForNode), nil when none was named.
	NodeID *string `bun:"node_id"`
	// Partition is the partition's table, schema-qualified.
	Partition string `bun:"partition_name,notnull"`
	// Lower and Upper are its bounds as the catalog wrote them (Upper exclusive).
	Lower string `bun:"lower_bound,notnull"`
	Upper string `bun:"upper_bound,notnull"`
	// EstimatedRows is the planner's estimate of its rows when the entry was written,
	// rounded; -1 when the partition was never analyzed. It is not a count.
	EstimatedRows int64  `bun:"estimated_rows,notnull"`
	Mode          string `bun:"retire_mode,notnull"`
	// Cutoff is the sweep's cutoff, which the upper bound was at or below.
	Cutoff    time.Time `bun:"cutoff,notnull"`
	StartedAt time.Time `bun:"started_at,notnull"`
	// Outcome is a passes.RetirementOutcome; "retiring" until it is settled, and for
	// good when the node stopped (or its write failed) after the entry was written.
	Outcome   string     `bun:"outcome,notnull"`
	Reason    *string    `bun:"reason"`
	SettledAt *time.Time `bun:"settled_at"`
}

// PartitionJournal is the ledger's passes.PartitionJournal: it writes each entry in
// its own statement, committed before the pass detaches anything. Build it with
// Ledger.PartitionJournal and hand it to passes.Table.WithPartitionJournal.
type PartitionJournal struct {
	ledger *Ledger
	clock  clock.Clock
	// node is the node id SetNode gave, shared by every copy: a node builds its table
	// passes, journal included, before it joins the ledger and learns its id.
	node *atomic.Pointer[string]
}

var _ passes.PartitionJournal = (*PartitionJournal)(nil)

// PartitionJournal returns the ledger's partition journal.
func (l *Ledger) PartitionJournal() *PartitionJournal {
	return &PartitionJournal{ledger: l, clock: clock.Real(), node: &atomic.Pointer[string]{}}
}

// SetNode names the node the entries are written by from now on, in place of the
// ledger's own (Ledger.ForNode): a node calls it once it has joined the ledger, after
// its passes, which hold this journal, were built.
func (j *PartitionJournal) SetNode(id string) {
	if id == "" {
		j.node.Store(nil)
		return
	}
	j.node.Store(&id)
}

// nodeID is the node id an entry records, nil for none.
func (j *PartitionJournal) nodeID() *string {
	if id := j.node.Load(); id != nil {
		return id
	}
	return j.ledger.owner()
}

// WithClock returns the journal reading time from c (tests use a manual clock).
func (j *PartitionJournal) WithClock(c clock.Clock) *PartitionJournal {
	cp := *j
	cp.clock = clock.OrReal(c)
	return &cp
}

// Retiring inserts the entry, outcome retiring, and returns its id. The insert is a
// statement of its own on the ledger's handle, so it is committed when it returns.
func (j *PartitionJournal) Retiring(ctx context.Context, pass string, r passes.PartitionReport) (int64, error) {
	l := j.ledger
	e := &PartitionRetirement{PassName: pass, NodeID: j.nodeID(), Partition: r.Partition, Lower: r.Lower, Upper: r.Upper,
		EstimatedRows: int64(math.Round(r.EstimatedRows)), Mode: string(r.Mode), Cutoff: r.Cutoff.UTC(),
		StartedAt: j.clock.Now().UTC(), Outcome: string(passes.RetirementStarted)}
	if _, err := l.db.NewInsert().Model(e).ModelTableExpr(l.table("partition_retirements")).Returning("id").Exec(ctx); err != nil {
		return 0, fmt.Errorf("ledger: journal the retirement of partition %s of %q: %w", r.Partition, pass, err)
	}
	if e.ID == 0 {
		return 0, fmt.Errorf("ledger: journal the retirement of partition %s of %q: the database returned no id", r.Partition, pass)
	}
	return e.ID, nil
}

// Settle records the entry's outcome, the reason when there is one, and when.
func (j *PartitionJournal) Settle(ctx context.Context, id int64, outcome passes.RetirementOutcome, reason error) error {
	l := j.ledger
	var why *string
	if reason != nil {
		s := shortError(reason)
		why = &s
	}
	_, err := l.db.NewUpdate().TableExpr("?", bun.Ident(l.table("partition_retirements"))).
		Set("outcome = ?", string(outcome)).Set("reason = ?", why).Set("settled_at = ?", j.clock.Now().UTC()).
		Where("id = ?", id).Exec(ctx)
	if err != nil {
		return fmt.Errorf("ledger: settle partition journal entry %d: %w", id, err)
	}
	return nil
}

// PartitionRetirements returns the journal's entries for pass (every pass when pass is
// ""), newest first, at most limit of them (all when limit is 0 or less).
func (l *Ledger) PartitionRetirements(ctx context.Context, pass string, limit int) ([]PartitionRetirement, error) {
	var rows []PartitionRetirement
	q := l.db.NewSelect().Model(&rows).ModelTableExpr(l.table("partition_retirements") + " AS partition_retirement").
		OrderExpr("started_at DESC, id DESC")
	if pass != "" {
		q = q.Where("pass_name = ?", pass)
	}
	if limit > 0 {
		q = q.Limit(int64(limit))
	}
	if err := q.Scan(ctx); err != nil {
		return nil, fmt.Errorf("ledger: partition retirements: %w", err)
	}
	return rows, nil
}
