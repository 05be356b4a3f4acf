package passes

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/driver/pgdriver"
	"github.com/uptrace/bun/schema"
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
// LOCKED, so a concurrent sweeper takes disjoint rows instead of waiting), deletes their
// delete-children deepest first, clears their set_null references, and deletes them by
// key. Re-checking inside the transaction is what keeps the keep-set exact: a row whose
// timestamp moved past the cutoff, or that gained a blocking child, since it was read is
// left alone.
//
// A batch whose transaction fails on a constraint (an unlisted table still referencing a
// row, say) is bisected: each half is retried on its own until the offending rows are
// isolated; each is reported with ReportSkipped and left for the next sweep, and the
// others are deleted.
type Table struct {
	db       *bun.DB
	name     string
	spec     TableSpec
	children []*childNode // deepest first
	blockers []*childNode // direct children with on_delete: block
	postgres bool
	uow      TxUnitOfWork
}

// NewTable validates spec (every problem at once, naming the pass and the field) and
// returns the pass. It does not touch the database; ValidateStartup does.
func NewTable(db *bun.DB, name string, spec TableSpec) (*Table, error) {
	if err := spec.Validate(name); err != nil {
		return nil, err
	}
	children, err := orderedChildren(spec.Children)
	if err != nil {
		return nil, fmt.Errorf("pass %q: children: %w", name, err)
	}
	t := &Table{db: db, name: name, spec: spec, children: children, postgres: isPostgres(db), uow: TxUnitOfWork{DB: db}}
	for _, c := range children {
		if c.onDelete() == OnDeleteBlock {
			t.blockers = append(t.blockers, c)
		}
	}
	return t, nil
}

// Name returns the pass's name.
func (t *Table) Name() string { return t.name }

// Registration returns the pass's registration with opts; its target is the table, so
// two passes on one table never run a batch at once.
func (t *Table) Registration(opts Options) Registration {
	return Registration{Name: t.name, New: t.Factory(), Options: opts, Target: t.spec.Table}
}

// Factory returns a factory that builds a fresh sweeper (with its own cursor) per sweep.
func (t *Table) Factory() Factory {
	return func(context.Context) (Pass, error) { return &tableSweep{t: t}, nil }
}

// tableSweep is one sweep over a Table: the keyset cursor lives here.
type tableSweep struct {
	t      *Table
	cursor *candidate
}

type candidate struct {
	key any
	ts  any
}

// PurgeBatch deletes the next batch; see Table.
func (s *tableSweep) PurgeBatch(ctx context.Context, batchSize int, olderThan time.Time) (int, error) {
	t := s.t
	if t.spec.StatementTimeout > 0 && !t.postgres {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, t.spec.StatementTimeout)
		defer cancel()
	}
	cut := t.cutoff(olderThan)
	cands, err := t.candidates(ctx, batchSize, cut, s.cursor)
	if err != nil {
		return 0, fmt.Errorf("pass %q: select batch: %w", t.name, err)
	}
	if len(cands) == 0 {
		return 0, nil
	}
	s.cursor = &cands[len(cands)-1]
	keys := make([]any, len(cands))
	for i, c := range cands {
		keys[i] = c.key
	}
	deleted, skipped, err := t.deleteOrBisect(ctx, keys, cut)
	if err != nil {
		return deleted, err
	}
	if len(cands) == batchSize && deleted+skipped < batchSize {
		ReportMoreWaiting(ctx) // some candidates went to another sweeper or changed
	}
	return deleted, nil
}

// cutoff converts the cutoff to the column's representation, rounded up to its
// precision, so "stored < converted" holds exactly when the stored time is before the
// cutoff.
func (t *Table) cutoff(at time.Time) any {
	at = at.UTC()
	switch t.spec.TimestampFormat {
	case TimestampUnixSeconds:
		return ceilDiv(at.UnixNano(), int64(time.Second))
	case TimestampUnixMillis:
		return ceilDiv(at.UnixNano(), int64(time.Millisecond))
	}
	at = at.Add(time.Microsecond - time.Nanosecond).Truncate(time.Microsecond)
	if t.postgres {
		return at
	}
	return at.Format("2006-01-02 15:04:05.999999-07:00") // as bun writes a time.Time on SQLite
}

func ceilDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a > 0 {
		q++
	}
	return q
}

// eligible appends the conditions every deleted row meets: expired, matching the filter
// and the trusted where, and not held by a block child.
func (t *Table) eligible(q *bun.SelectQuery, cut any) *bun.SelectQuery {
	q = q.Where("? < ?", t.col(t.spec.Timestamp), cut)
	if f := t.spec.Filter; f != nil {
		q = q.Where("? IN (?)", t.col(f.Column), bun.List(f.In))
	}
	if t.spec.Where != "" {
		q = q.Where("(?)", bun.Safe(t.spec.Where))
	}
	for _, b := range t.blockers {
		q = q.Where("NOT EXISTS (SELECT 1 FROM ? WHERE ? = ?)", ident(b.spec.Table), qualified(b.spec.Table, b.spec.ForeignKey), t.col(t.spec.Key))
	}
	return q
}

// col is a column of the swept table, qualified by it so correlated subqueries are
// unambiguous.
func (t *Table) col(column string) schema.QueryAppender { return qualified(t.spec.Table, column) }

func qualified(table, column string) schema.QueryAppender {
	return bun.SafeQuery("?.?", ident(table), bun.Ident(column))
}

func (t *Table) candidates(ctx context.Context, n int, cut any, after *candidate) ([]candidate, error) {
	q := t.eligible(t.db.NewSelect().TableExpr("?", ident(t.spec.Table)).
		ColumnExpr("?, ?", t.col(t.spec.Key), t.col(t.spec.Timestamp)), cut)
	if after != nil {
		q = q.Where("(?, ?) > (?, ?)", t.col(t.spec.Timestamp), t.col(t.spec.Key), after.ts, after.key)
	}
	q = q.OrderExpr("?, ?", t.col(t.spec.Timestamp), t.col(t.spec.Key)).Limit(int64(n))
	rows, err := q.Rows(ctx)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []candidate
	for rows.Next() {
		var c candidate
		if err := rows.Scan(&c.key, &c.ts); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// deleteOrBisect deletes keys in one transaction; when that fails on a constraint, it
// splits the keys and tries each half, down to single rows, which it skips.
func (t *Table) deleteOrBisect(ctx context.Context, keys []any, cut any) (deleted, skipped int, err error) {
	n, err := t.deleteKeys(ctx, keys, cut)
	if err == nil {
		return n, 0, nil
	}
	if !isRowSpecific(err) || ctx.Err() != nil {
		return 0, 0, fmt.Errorf("pass %q: delete batch: %w", t.name, err)
	}
	if len(keys) == 1 {
		ReportSkipped(ctx, keys[0], err)
		return 0, 1, nil
	}
	mid := len(keys) / 2
	for _, half := range [][]any{keys[:mid], keys[mid:]} {
		d, s, err := t.deleteOrBisect(ctx, half, cut)
		deleted, skipped = deleted+d, skipped+s
		if err != nil {
			return deleted, skipped, err
		}
	}
	return deleted, skipped, nil
}

// isRowSpecific reports whether err is a failure that some rows of a batch cause and
// others do not (an integrity constraint, or a deadlock or serialization failure that
// outlived the retries), so bisection can isolate them. Anything else (a lost
// connection, a missing table, a timeout) would fail every half alike and goes to
// supervision instead.
func isRowSpecific(err error) bool {
	var pgErr pgdriver.Error
	if errors.As(err, &pgErr) {
		code := pgErr.Field('C')
		return strings.HasPrefix(code, "23") || code == "40001" || code == "40P01"
	}
	msg := err.Error()
	return strings.Contains(msg, "constraint failed") || strings.Contains(msg, "SQLITE_CONSTRAINT")
}

// deleteKeys runs one batch transaction over keys.
func (t *Table) deleteKeys(ctx context.Context, keys []any, cut any) (int, error) {
	var deleted int
	err := t.uow.Execute(ctx, func(ctx context.Context) error {
		tx := DB(ctx, t.db)
		if t.postgres && t.spec.StatementTimeout > 0 {
			if _, err := tx.ExecContext(ctx, fmt.Sprintf("SET LOCAL statement_timeout = %d", t.spec.StatementTimeout.Milliseconds())); err != nil {
				return err
			}
		}
		locked, err := t.lock(ctx, tx, keys, cut)
		if err != nil || len(locked) == 0 {
			return err
		}
		for _, c := range t.children {
			if err := t.handleChild(ctx, tx, c, locked); err != nil {
				return err
			}
		}
		res, err := tx.NewDelete().TableExpr("?", ident(t.spec.Table)).Where("? IN (?)", bun.Ident(t.spec.Key), bun.List(locked)).Exec(ctx)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		deleted = int(n)
		return err
	})
	return deleted, err
}

// lock re-reads which of keys are still eligible and, on PostgreSQL, locks them, skipping
// rows another transaction holds.
func (t *Table) lock(ctx context.Context, tx bun.IDB, keys []any, cut any) ([]any, error) {
	q := t.eligible(tx.NewSelect().TableExpr("?", ident(t.spec.Table)).ColumnExpr("?", t.col(t.spec.Key)), cut).
		Where("? IN (?)", t.col(t.spec.Key), bun.List(keys))
	if t.postgres {
		q = q.For("UPDATE SKIP LOCKED")
	}
	rows, err := q.Rows(ctx)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var locked []any
	for rows.Next() {
		var k any
		if err := rows.Scan(&k); err != nil {
			return nil, err
		}
		locked = append(locked, k)
	}
	return locked, rows.Err()
}

// parentKeys is the set of keys a child's foreign key points into: the batch's keys for
// a direct child, or a subquery walking down from them for a nested one.
func (t *Table) parentKeys(c *childNode, keys []any) schema.QueryAppender {
	if c.parent == nil {
		return bun.List(keys)
	}
	p := c.parent
	return bun.SafeQuery("SELECT ? FROM ? WHERE ? IN (?)", bun.Ident(p.key()), ident(p.spec.Table), bun.Ident(p.spec.ForeignKey), t.parentKeys(p, keys))
}

func (t *Table) handleChild(ctx context.Context, tx bun.IDB, c *childNode, keys []any) error {
	var err error
	switch c.onDelete() {
	case OnDeleteDelete:
		_, err = tx.NewDelete().TableExpr("?", ident(c.spec.Table)).
			Where("? IN (?)", bun.Ident(c.spec.ForeignKey), t.parentKeys(c, keys)).Exec(ctx)
	case OnDeleteSetNull:
		_, err = tx.NewUpdate().TableExpr("?", ident(c.spec.Table)).
			Set("? = NULL", bun.Ident(c.spec.ForeignKey)).
			Where("? IN (?)", bun.Ident(c.spec.ForeignKey), t.parentKeys(c, keys)).Exec(ctx)
	}
	if err != nil {
		return fmt.Errorf("child table %s: %w", c.spec.Table, err)
	}
	return nil
}

// DryRunResult is what a sweep at a cutoff would do.
type DryRunResult struct {
	// Eligible is how many rows a sweep would delete.
	Eligible int64
	// Blocked is how many expired rows block children keep.
	Blocked int64
}

// DryRun counts what a sweep at cutoff would delete, and what block children keep,
// deleting nothing.
func (t *Table) DryRun(ctx context.Context, cutoff time.Time) (DryRunResult, error) {
	cut := t.cutoff(cutoff)
	var res DryRunResult
	n, err := t.eligible(t.db.NewSelect().TableExpr("?", ident(t.spec.Table)), cut).Count(ctx)
	if err != nil {
		return res, fmt.Errorf("pass %q: dry run: %w", t.name, err)
	}
	res.Eligible = n
	if len(t.blockers) == 0 {
		return res, nil
	}
	unblocked := *t
	unblocked.blockers = nil
	all, err := unblocked.eligible(t.db.NewSelect().TableExpr("?", ident(t.spec.Table)), cut).Count(ctx)
	if err != nil {
		return res, fmt.Errorf("pass %q: dry run: %w", t.name, err)
	}
	res.Blocked = all - res.Eligible
	return res, nil
}
