package passes

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/core"
)

// bisectNext handles a batch that failed on a constraint: it reads the same candidates
// without deleting, moves the cursor past them, and deletes them half by half.
func (s *tableSweep) bisectNext(ctx context.Context, db bun.IDB, batchSize int, cut cutoff) (int, error) {
	t := s.t
	cands, err := t.candidates(ctx, db, batchSize, cut, s.position(), false, s.layout)
	if err != nil {
		return 0, fmt.Errorf("pass %q: select batch: %w", t.name, err)
	}
	s.advance(cands, true)
	b := &bisection{}
	keys := make([][]any, 0, len(cands))
	for _, c := range cands {
		if s.setAside[KeyText(c.key)] {
			// In quarantine and not due: trying it would fail as before and cost a
			// bisection of its part of the batch.
			b.skipped = append(b.skipped, c.key)
			ReportHeld(ctx, t.reportedKey(c.key), ErrQuarantined)
			continue
		}
		keys = append(keys, c.key)
	}
	keys = s.setAsideReferenced(ctx, keys, b)
	err = s.deleteOrBisect(ctx, db, keys, cut, b)
	s.skipped = append(s.skipped, b.skipped...)
	s.deletedKeys(ctx, b.deleted)
	if err == nil && len(b.deleted)+len(b.skipped) < batchSize {
		s.passedOver(ctx, db, cut)
	}
	return len(b.deleted), err
}

// bisection is what one bisected batch did: the keys it deleted and the keys it left
// in place (skipped, held in quarantine or set aside).
type bisection struct {
	deleted [][]any
	skipped [][]any
}

// deleteOrBisect deletes keys in one transaction; when that fails on a constraint, it
// splits the keys and tries each half, down to single rows, which it skips (see
// rowFailed).
func (s *tableSweep) deleteOrBisect(ctx context.Context, db bun.IDB, keys [][]any, cut cutoff, b *bisection) error {
	t := s.t
	if len(keys) == 0 {
		return nil
	}
	deleted, err := t.deleteKeys(ctx, db, keys, cut, s.layout)
	if err == nil {
		b.deleted = append(b.deleted, deleted...)
		return nil
	}
	if !IsRowSpecific(err) || ctx.Err() != nil {
		return fmt.Errorf("pass %q: delete batch: %w", t.name, err)
	}
	if len(keys) == 1 {
		b.skipped = append(b.skipped, keys[0])
		s.rowFailed(ctx, keys[0], err)
		return nil
	}
	mid := len(keys) / 2
	for _, half := range [][][]any{keys[:mid], keys[mid:]} {
		if err := s.deleteOrBisect(ctx, db, half, cut, b); err != nil {
			return err
		}
	}
	return nil
}

// reportedKey is how a skipped row's key is reported: the value of a one-column key,
// the list of values of a composite one.
func (t *Table) reportedKey(key []any) any {
	if len(key) == 1 {
		return key[0]
	}
	return key
}

// IsRowSpecific reports whether err is a failure that some rows of a batch cause and
// others do not (an integrity constraint, an exception a trigger raised, or a deadlock
// or serialization failure that
// outlived the retries), so bisection can isolate them. Anything else (a lost
// connection, a missing table, a timeout) would fail every half alike and goes to
// supervision instead.
func IsRowSpecific(err error) bool {
	return hasClass(err, core.ErrRowSpecific) || hasClass(err, core.ErrRetryUnit)
}

// deleteKeys deletes exactly keys (those still eligible) in one transaction and returns
// those it deleted: bisection runs each part through it.
func (t *Table) deleteKeys(ctx context.Context, db bun.IDB, keys [][]any, cut cutoff, lay *tableLayout) ([][]any, error) {
	var deleted [][]any
	err := TxUnitOfWork{DB: db}.Execute(ctx, func(ctx context.Context) error {
		tx := DB(ctx, db)
		locked, err := t.lock(ctx, tx, keys, cut, lay)
		if err != nil || len(locked) == 0 {
			deleted = nil
			return err
		}
		held, err := t.heldByChildren(ctx, tx, locked, lay)
		if err != nil {
			return err
		}
		if locked = without(locked, held); len(locked) == 0 {
			deleted = nil
			return nil
		}
		if err := t.deleteLocked(ctx, tx, locked); err != nil {
			return err
		}
		deleted = locked
		return nil
	})
	return deleted, err
}

// lock re-reads which of keys are still eligible and has the driver lock them, skipping
// rows another transaction holds where the database has row locks.
func (t *Table) lock(ctx context.Context, tx bun.IDB, keys [][]any, cut cutoff, lay *tableLayout) ([][]any, error) {
	cands, err := t.recheck(ctx, tx, keys, cut, lay)
	if err != nil {
		return nil, err
	}
	return candidateKeys(cands), nil
}

// recheck re-reads which of keys are still eligible, found by key equality, and has the
// driver lock them (skipping rows another transaction holds where the database has row
// locks); it returns them in (timestamp, key) order.
func (t *Table) recheck(ctx context.Context, tx bun.IDB, keys [][]any, cut cutoff, lay *tableLayout) ([]candidate, error) {
	q := t.eligible(tx.NewSelect().TableExpr("?", ident(t.spec.Table)).ColumnExpr("?, ?", columnList(t.spec.Table, t.key), t.col(t.spec.Timestamp)), cut).
		Where("? IN (?)", tuple(t.spec.Table, t.key), keyList(keys)).
		OrderExpr("?, ?", t.col(t.spec.Timestamp), columnList(t.spec.Table, t.key))
	rows, err := t.drv.LockCandidates(q).Rows(ctx)
	if err != nil {
		return nil, err
	}
	return scanCandidates(rows, lay)
}
