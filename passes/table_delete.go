package passes

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/schema"
)

// deleteNext deletes the next batch in one statement and returns the deleted rows'
// keys and timestamps. On PostgreSQL the keys are locked (skipping rows another sweeper
// holds) in a subquery; a one-column key's result becomes an array, so the delete finds
// the rows through the key's index whatever the batch size. SQLite takes its write lock
// for the statement.
func (t *Table) deleteNext(ctx context.Context, db bun.IDB, n int, cut cutoff, pos position, lay *tableLayout) ([]candidate, error) {
	sub := t.nextQuery(db, n, cut, pos).ColumnExpr("?", columnList(t.spec.Table, t.key))
	if t.postgres {
		sub = sub.For("UPDATE SKIP LOCKED")
	}
	q := db.NewDelete().TableExpr("?", ident(t.spec.Table))
	if t.postgres && len(t.key) == 1 {
		q = q.Where("? = ANY(ARRAY(?))", t.col(t.key[0]), sub)
	} else {
		q = q.Where("? IN (?)", tuple(t.spec.Table, t.key), sub)
	}
	q = q.Returning("?, ?", columnList("", t.key), bun.Ident(t.spec.Timestamp))
	query := q.String()
	if t.postgres {
		// RETURNING comes in no particular order; the cursor wants the last row.
		query = db.NewRaw("WITH deleted AS (?) SELECT * FROM deleted ORDER BY ?, ?", q, bun.Ident(t.spec.Timestamp), columnList("", t.key)).String()
	}
	rows, err := db.QueryContext(ctx, query)
	if err != nil {
		return nil, err
	}
	return scanCandidates(rows, lay)
}

// deleteNextInTx deletes the next batch with its children in one transaction: lock the
// candidates and their children, delete or clear the children, delete the candidates by
// key. It returns the candidates it read, in order, and those it deleted: the others are
// the parents whose children another transaction holds (see heldByChildren), passed over.
func (t *Table) deleteNextInTx(ctx context.Context, db bun.IDB, n int, cut cutoff, pos position, lay *tableLayout) (read, deleted []candidate, err error) {
	err = TxUnitOfWork{DB: db}.Execute(ctx, func(ctx context.Context) error {
		read, deleted = nil, nil
		tx := DB(ctx, db)
		cands, err := t.candidates(ctx, tx, n, cut, pos, true, lay)
		if err != nil || len(cands) == 0 {
			return err
		}
		held, err := t.heldByChildren(ctx, tx, candidateKeys(cands), lay)
		if err != nil {
			return err
		}
		free := make([]candidate, 0, len(cands))
		for _, c := range cands {
			if !held[KeyText(c.key)] {
				free = append(free, c)
			}
		}
		if len(free) > 0 {
			if err := t.deleteLocked(ctx, tx, candidateKeys(free)); err != nil {
				return err
			}
		}
		read, deleted = cands, free
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return read, deleted, nil
}

// statementTimeoutMillis is d in PostgreSQL's whole milliseconds, rounded up: truncating
// would turn 1.5ms into 1ms, and anything under 1ms into 0, which PostgreSQL reads as no
// timeout at all (Validate refuses a positive value under 1ms for that reason).
func statementTimeoutMillis(d time.Duration) int64 {
	return int64((d + time.Millisecond - 1) / time.Millisecond)
}

// deleteLocked handles the children of keys (already locked by this transaction) deepest
// first, then deletes the keys.
func (t *Table) deleteLocked(ctx context.Context, tx bun.IDB, keys [][]any) error {
	for _, c := range t.children {
		if err := t.handleChild(ctx, tx, c, keys); err != nil {
			return err
		}
	}
	_, err := tx.NewDelete().TableExpr("?", ident(t.spec.Table)).Where("? IN (?)", tuple("", t.key), keyList(keys)).Exec(ctx)
	return err
}

// parentKeys is the set of keys a child's foreign key points into: the batch's keys for
// a direct child, or a subquery walking down from them for a nested one.
func (t *Table) parentKeys(c *childNode, keys [][]any) schema.QueryAppender {
	if c.parent == nil {
		return keyList(keys)
	}
	p := c.parent
	return bun.SafeQuery("SELECT ? FROM ? WHERE ? IN (?)", columnList("", p.key()), ident(p.spec.Table), tuple("", p.foreignKey()), t.parentKeys(p, keys))
}

func (t *Table) handleChild(ctx context.Context, tx bun.IDB, c *childNode, keys [][]any) error {
	var err error
	fk := c.foreignKey()
	switch c.onDelete() {
	case OnDeleteDelete:
		_, err = tx.NewDelete().TableExpr("?", ident(c.spec.Table)).
			Where("? IN (?)", tuple("", fk), t.parentKeys(c, keys)).Exec(ctx)
	case OnDeleteSetNull:
		q := tx.NewUpdate().TableExpr("?", ident(c.spec.Table))
		for _, col := range fk {
			q = q.Set("? = NULL", bun.Ident(col))
		}
		_, err = q.Where("? IN (?)", tuple("", fk), t.parentKeys(c, keys)).Exec(ctx)
	}
	if err != nil {
		return fmt.Errorf("child table %s: %w", c.spec.Table, err)
	}
	return nil
}
