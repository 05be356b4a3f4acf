package passes

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/schema"

	"github.com/retentionkit/retention/passes/driver"
)

// Table is a declarative table pass: it deletes the expired rows of one table, in
// batches, with the rows that reference them. Build one with NewTable, register it with
// Registration; every sweep gets a fresh sweeper from its Factory.
//
// # The shape of a batch
//
// Each batch first reads the next batchSize candidate keys in (timestamp, key) order,
// seeking past the last candidate of the previous batch (a keyset cursor), so a batch
// never rescans the rows earlier batches deleted or skipped. The notes measured this
// shape at about twice the drain rate of re-selecting the oldest keys from the start of
// the index each time, and it disturbed a concurrent OLTP load the least. Then one
// transaction re-checks and locks those candidates (on PostgreSQL with FOR UPDATE SKIP
// LOCKED, so a concurrent sweeper takes disjoint rows instead of waiting) and their
// children alike, passing over a candidate with a child another transaction holds
// (see heldByChildren), deletes their delete-children deepest first, clears their
// set_null references, and deletes them by key. Re-checking inside the transaction is what keeps the keep-set exact: a row whose
// timestamp moved past the cutoff, or that gained a blocking child, since it was read is
// left alone.
//
// A batch whose transaction fails on a constraint (an unlisted table still referencing a
// row, say) first sets aside the rows the catalog's unlisted foreign keys reference and
// the rows known to be in quarantine (table_heldrefs.go), then is bisected: each half is
// retried on its own until the offending rows are isolated; each is reported with ReportSkipped (as a *RowError naming the constraint
// and the referencing table when the database does) and left in place, and the others
// are deleted. With a Quarantine (WithQuarantine) such a row is remembered across
// sweeps: reported once, when it enters, and tried again only when its backoff is over.
type Table struct {
	db       *bun.DB
	name     string
	spec     TableSpec
	key      []string     // the key's columns
	children []*childNode // deepest first
	blockers []*childNode // direct children with on_delete: block
	// drv is the database's driver: everything that differs by database is asked of it.
	drv driver.Driver
	// quarantine remembers the rows whose delete fails on its own; nil: none.
	quarantine Quarantine
	// journal records each partition retirement before its detach
	// (WithPartitionJournal); nil: none.
	journal PartitionJournal
	// sweepLock makes every sweep exclusive across sessions (WithSweepLock); nil: none.
	sweepLock *SweepLockOptions
	// replicas are the replicas whose lag paces the pass (WithReplicas); none: the
	// database's own view of its replicas, if it keeps one.
	replicas []Replica
}

// NewTable validates spec (every problem at once, naming the pass and the field) and
// returns the pass, with the driver that owns db's dialect (DriverFor). It does not
// touch the database; ValidateStartup does.
func NewTable(db *bun.DB, name string, spec TableSpec) (*Table, error) {
	d, err := DriverFor(db)
	if err != nil {
		return nil, fmt.Errorf("pass %q: %w", name, err)
	}
	return NewTableWith(d, db, name, spec)
}

// NewTableWith is NewTable with the driver given, for a handle whose dialect no driver
// of Drivers owns (a driver of the embedding service's own) or a test that runs one
// driver against another's database.
func NewTableWith(d driver.Driver, db *bun.DB, name string, spec TableSpec) (*Table, error) {
	if err := spec.Validate(name); err != nil {
		return nil, err
	}
	children, err := orderedChildren(spec.Children)
	if err != nil {
		return nil, fmt.Errorf("pass %q: children: %w", name, err)
	}
	t := &Table{db: db, name: name, spec: spec, key: spec.keyColumns(), children: children, drv: d}
	for _, c := range children {
		if c.onDelete() == OnDeleteBlock {
			t.blockers = append(t.blockers, c)
		}
	}
	return t, nil
}

// WithQuarantine returns a copy of the pass that keeps the rows whose delete fails on
// its own in q (see Quarantine) instead of retrying them at full cost every sweep.
func (t *Table) WithQuarantine(q Quarantine) *Table {
	c := *t
	c.quarantine = q
	return &c
}

// WithSweepLock returns a copy of the pass whose every sweep holds the advisory lock o
// names (the pass's name when o.Identity is empty) on the very connection its batches
// run on, taken before the first batch: if that connection dies, the lock and the
// batches die together, so no batch can ever run without the lock. A sweep denied the
// lock ends with an *ElsewhereError before deleting anything. It needs PostgreSQL: on
// SQLite it is refused with ErrClusterUnsupported.
func (t *Table) WithSweepLock(o SweepLockOptions) (*Table, error) {
	if err := sweepLockSupported(t.drv); err != nil {
		return nil, fmt.Errorf("pass %q: %w", t.name, err)
	}
	if o.Identity == "" {
		o.Identity = t.name
	}
	c := *t
	c.sweepLock = &o
	return &c, nil
}

// Name returns the pass's name.
func (t *Table) Name() string { return t.name }

// Registration returns the pass's registration with opts; its target is the table, so
// two passes on one table never run a batch at once.
func (t *Table) Registration(opts Options) Registration {
	return Registration{Name: t.name, New: t.Factory(), Options: opts, Target: t.spec.Table, Signals: t.Signals()}
}

// Factory returns a factory that builds a fresh sweeper (with its own cursor) per sweep.
func (t *Table) Factory() Factory {
	return func(context.Context) (Pass, error) { return &tableSweep{t: t}, nil }
}

// eligible appends the conditions every deleted row meets: expired, matching the filter
// and the where, and not held by a block child.
func (t *Table) eligible(q *bun.SelectQuery, cut cutoff) *bun.SelectQuery {
	q = q.Where("?", t.expired(cut))
	if f := t.spec.Filter; f != nil {
		q = q.Where("?", f.condition(t.col(f.Column)))
	}
	if t.spec.Where != "" {
		q = q.Where("(?)", bun.Safe(t.spec.Where))
	}
	for _, b := range t.blockers {
		q = q.Where("NOT EXISTS (SELECT 1 FROM ? WHERE ?)", ident(b.spec.Table), joinOn(b.spec.Table, b.foreignKey(), t.spec.Table, t.key))
	}
	return q
}

// col is a column of the swept table, qualified by it so correlated subqueries are
// unambiguous.
func (t *Table) col(column string) schema.QueryAppender { return qualified(t.spec.Table, column) }

func qualified(table, column string) schema.QueryAppender {
	return bun.SafeQuery("?.?", ident(table), bun.Ident(column))
}

// DryRunResult is what a sweep at a cutoff would do.
type DryRunResult struct {
	// Eligible is how many rows a sweep would delete.
	Eligible int64
	// Blocked is how many expired rows block children keep.
	Blocked int64
	// Partitions is how many whole partitions a pass with partitions: would retire, and
	// InPartitions how many of the Eligible rows they hold (counted, not estimated);
	// the row path would delete the rest.
	Partitions   int
	InPartitions int64
}

// DryRun counts what a sweep at cutoff would delete, and what block children keep,
// deleting nothing.
func (t *Table) DryRun(ctx context.Context, at time.Time) (DryRunResult, error) {
	var res DryRunResult
	lay, err := t.readLayout(ctx, t.db)
	if err != nil {
		return res, fmt.Errorf("pass %q: dry run: %w", t.name, err)
	}
	cut := t.cutoff(at, lay)
	n, err := t.eligible(t.db.NewSelect().TableExpr("?", ident(t.spec.Table)), cut).Count(ctx)
	if err != nil {
		return res, fmt.Errorf("pass %q: dry run: %w", t.name, err)
	}
	res.Eligible = n
	if err := t.dryRunPartitions(ctx, cut, &res); err != nil {
		return res, fmt.Errorf("pass %q: dry run: %w", t.name, err)
	}
	if len(t.blockers) == 0 {
		return res, nil
	}
	unblocked := *t
	unblocked.blockers = nil
	all, err := unblocked.eligible(t.db.NewSelect().TableExpr("?", ident(t.spec.Table)), cut).Count(ctx)
	if err != nil {
		return res, fmt.Errorf("pass %q: dry run: %w", t.name, err)
	}
	// The two counts are two statements: a sweep deleting between them can make the
	// second smaller than the first, and a held count below zero means nothing.
	res.Blocked = max(all-res.Eligible, 0)
	return res, nil
}

// OldestExpired returns the timestamp of the oldest row a sweep at cutoff would delete,
// and false when there is none: how far behind the retention is. Rows in the pass's
// quarantine are left out (up to maxExcluded of them): they are held, not behind, and
// would otherwise keep the age growing after a full drain.
func (t *Table) OldestExpired(ctx context.Context, at time.Time) (time.Time, bool, error) {
	lay, err := t.readLayout(ctx, t.db)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("pass %q: oldest expired row: %w", t.name, err)
	}
	q := t.eligible(t.db.NewSelect().TableExpr("?", ident(t.spec.Table)), t.cutoff(at, lay))
	held, err := t.quarantinedKeys(ctx, lay)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("pass %q: oldest expired row: %w", t.name, err)
	}
	if len(held) > 0 {
		q = q.Where("? NOT IN (?)", tuple(t.spec.Table, t.key), keyList(held))
	}
	var raw any
	err = q.ColumnExpr("?", t.oldestExpr()).Scan(ctx, &raw)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("pass %q: oldest expired row: %w", t.name, err)
	}
	return t.timeOf(raw, lay)
}
