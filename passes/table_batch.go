package passes

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/schema"

	"github.com/retentionkit/retention/passes/driver"
)

// This file is one batch of a table pass, top to bottom: purgeBatch names its steps in
// order and the functions after it follow the same order. The sweep around the batches
// (its connection, cursor and close) is table_sweep.go; a batch that fails on a
// constraint goes on in table_bisect.go.

// candidate is one row a batch read: its key (one value per key column) and timestamp.
type candidate struct {
	key []any
	ts  any
}

// purgeBatch deletes the next batch of at most batchSize rows expired at olderThan.
func (s *tableSweep) purgeBatch(ctx context.Context, batchSize int, olderThan time.Time) (int, error) {
	t := s.t
	// 1. Bound the batch: a driver that pins no session bounds statements by the
	// batch's context; one that does has the timeout on its session (pinSession).
	if t.spec.StatementTimeout > 0 && !t.drv.PinsSweep() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, t.spec.StatementTimeout)
		defer cancel()
	}
	// 2. The connection, and on the sweep's first batch the table's layout, size and
	// quarantine.
	db, err := s.conn(ctx)
	if err != nil {
		return 0, fmt.Errorf("pass %q: %w", t.name, err)
	}
	if err := s.firstBatch(ctx, db); err != nil {
		return 0, err
	}
	// 3. The cutoff in the timestamp column's own form.
	cut := t.cutoff(olderThan, s.layout)
	if !s.quarantineRead {
		if err := s.loadQuarantine(ctx, db, cut); err != nil {
			return 0, err
		}
	}
	// With partitions:, whole expired partitions go first, one a batch.
	if retired, err := s.retireNext(ctx, db, batchSize, cut, olderThan); retired || err != nil {
		return 0, err
	}
	// 4. Read, lock and delete: one statement without children, one transaction with.
	stop := s.cancelOnDone(ctx)
	defer stop()
	read, deleted, ordered, err := s.deleteBatch(ctx, db, batchSize, cut)
	// 5. A batch that failed on a constraint is bisected (table_bisect.go).
	if err != nil {
		if !IsRowSpecific(err) || ctx.Err() != nil {
			return 0, fmt.Errorf("pass %q: delete batch: %w", t.name, err)
		}
		return s.bisectNext(ctx, db, batchSize, cut)
	}
	// 6. Move the cursor past every row read, the parents passed over for their
	// children's locks too, so the rest of the table is reached; the rewind at the end
	// comes back to them.
	s.advance(read, ordered)
	s.deletedKeys(ctx, candidateKeys(deleted))
	// 7. Say whether more is waiting: a short batch looks for rows passed over, a batch
	// that passed rows over says so.
	switch {
	case len(read) < batchSize:
		s.passedOver(ctx, db, cut)
	case len(deleted) < len(read):
		ReportMoreWaiting(ctx)
	}
	return len(deleted), nil
}

// firstBatch reads, once per sweep, what every batch needs: the table's layout and
// its size before the sweep (for the hygiene).
func (s *tableSweep) firstBatch(ctx context.Context, db bun.IDB) error {
	if s.layout != nil {
		return nil
	}
	var err error
	if s.layout, err = s.t.readLayout(ctx, db); err != nil {
		return fmt.Errorf("pass %q: %w", s.t.name, err)
	}
	if err := s.readTableSize(ctx, db); err != nil {
		return fmt.Errorf("pass %q: %w", s.t.name, err)
	}
	return nil
}

// deleteBatch runs step 4: it returns the candidates read, those deleted, and whether
// read is in (timestamp, key) order.
func (s *tableSweep) deleteBatch(ctx context.Context, db bun.IDB, n int, cut cutoff) (read, deleted []candidate, ordered bool, err error) {
	t := s.t
	if t.singleStatement() {
		deleted, ordered, err = t.deleteNext(ctx, db, n, cut, s.position(), s.layout)
		return deleted, deleted, ordered, err
	}
	read, deleted, err = t.deleteNextInTx(ctx, db, n, cut, s.position(), s.layout)
	return read, deleted, true, err
}

// singleStatement reports whether a batch can be one statement: no children to handle
// first, so no explicit transaction is needed, and a driver that may lock while reading
// a range (not LocksByKey). A statement timeout does not need one either (step 1).
func (t *Table) singleStatement() bool {
	return len(t.children) == 0 && !t.drv.LocksByKey()
}

// deleteNext is step 4 without children: the driver shapes one statement that selects,
// locks and deletes the next batch and returns the deleted rows' keys and timestamps.
func (t *Table) deleteNext(ctx context.Context, db bun.IDB, n int, cut cutoff, pos position, lay *tableLayout) ([]candidate, bool, error) {
	shape := driver.DeleteNext{
		Table:      ident(t.spec.Table),
		Key:        tuple(t.spec.Table, t.key),
		Candidates: t.nextQuery(db, n, cut, pos).ColumnExpr("?", columnList(t.spec.Table, t.key)),
		Returning:  bun.SafeQuery("?, ?", columnList("", t.key), bun.Ident(t.spec.Timestamp)),
		Order:      t.returnedOrder(),
	}
	if len(t.key) == 1 {
		shape.OneKey = t.col(t.key[0])
	} else if slices.Contains(t.key, t.spec.Timestamp) {
		shape.Stamp = &driver.KeyStamp{
			Column: t.col(t.spec.Timestamp),
			Name:   bun.Ident(t.spec.Timestamp),
			Key:    columnList("", t.key),
		}
	}
	query, ordered := t.drv.DeleteNext(db, shape)
	rows, err := db.QueryContext(ctx, query)
	if err != nil {
		return nil, false, err
	}
	cands, err := scanCandidates(rows, lay)
	return cands, ordered, err
}

// deleteNextInTx is step 4 with children (or on a LocksByKey driver), in one
// transaction: (a) read and lock the candidates, (b) pass over those whose children
// another transaction holds, (c) delete or clear the children and delete the rest by
// key. It returns the candidates it read, in order, and those it deleted.
func (t *Table) deleteNextInTx(ctx context.Context, db bun.IDB, n int, cut cutoff, pos position, lay *tableLayout) (read, deleted []candidate, err error) {
	err = TxUnitOfWork{DB: db}.Execute(ctx, func(ctx context.Context) error {
		read, deleted = nil, nil
		tx := DB(ctx, db)
		got, cands, err := t.lockedCandidates(ctx, tx, n, cut, pos, lay) // (a)
		if err != nil || len(cands) == 0 {
			read = got
			return err
		}
		held, err := t.heldByChildren(ctx, tx, candidateKeys(cands), lay) // (b)
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
			if err := t.deleteLocked(ctx, tx, candidateKeys(free)); err != nil { // (c)
				return err
			}
		}
		read, deleted = got, free
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return read, deleted, nil
}

// lockedCandidates is step 4(a): the next n eligible rows after the cursor as read, and
// those of them locked. A LocksByKey driver reads them without locks, then re-checks and
// locks them by key, skipping rows another transaction holds and rows no longer
// eligible: every row read moves the cursor, so a row passed over does not end the
// sweep early (passedOver comes back to it). The others lock the rows as they read them,
// and the two are the same.
func (t *Table) lockedCandidates(ctx context.Context, tx bun.IDB, n int, cut cutoff, pos position, lay *tableLayout) (read, locked []candidate, err error) {
	if !t.drv.LocksByKey() {
		locked, err = t.candidates(ctx, tx, n, cut, pos, true, lay)
		return locked, locked, err
	}
	// Rows passed over leave the batch short of n: read on past them, as a locked range
	// read would, a bounded number of times.
	for round := 0; round < maxRecheckRounds && len(locked) < n; round++ {
		want := n - len(locked)
		next, err := t.candidates(ctx, tx, want, cut, pos, false, lay)
		if err != nil {
			return nil, nil, err
		}
		if len(next) == 0 {
			break
		}
		read = append(read, next...)
		got, err := t.recheck(ctx, tx, candidateKeys(next), cut, lay)
		if err != nil {
			return nil, nil, err
		}
		locked = append(locked, got...)
		if len(next) < want {
			break
		}
		last := next[len(next)-1]
		pos.after = &last
	}
	return read, locked, nil
}

// maxRecheckRounds bounds how often a LocksByKey batch reads on past rows it passed
// over before it goes with fewer rows than it may take.
const maxRecheckRounds = 4

// candidates reads the next n eligible rows after the cursor, in (timestamp, key)
// order; with lock, it has the driver lock them (skipping rows another transaction
// holds, where the database has row locks).
func (t *Table) candidates(ctx context.Context, db bun.IDB, n int, cut cutoff, pos position, lock bool, lay *tableLayout) ([]candidate, error) {
	q := t.nextQuery(db, n, cut, pos).ColumnExpr("?, ?", columnList(t.spec.Table, t.key), t.col(t.spec.Timestamp))
	if lock {
		q = t.drv.LockCandidates(q)
	}
	rows, err := q.Rows(ctx)
	if err != nil {
		return nil, err
	}
	return scanCandidates(rows, lay)
}

// position is where a sweep's next batch starts: after the cursor, leaving out the
// keys it already skipped when it went back to the start (see passedOver) and the
// quarantined keys not yet due.
type position struct {
	after   *candidate
	exclude [][]any
}

func (s *tableSweep) position() position {
	return position{after: s.cursor, exclude: s.excluded(s.exclude)}
}

// nextQuery selects (without columns) the next n eligible rows after the position.
func (t *Table) nextQuery(db bun.IDB, n int, cut cutoff, pos position) *bun.SelectQuery {
	q := t.eligible(db.NewSelect().TableExpr("?", ident(t.spec.Table)), cut)
	order := columnList(t.spec.Table, t.orderColumns())
	if after := pos.after; after != nil {
		q = q.Where("(?) > (?)", order, bun.List(t.orderValues(*after)))
	}
	if len(pos.exclude) > 0 {
		q = q.Where("? NOT IN (?)", tuple(t.spec.Table, t.key), keyList(pos.exclude))
	}
	return q.OrderExpr("?", order).Limit(int64(n))
}

// orderColumns are the columns a sweep orders its rows by and its cursor compares: the
// timestamp, then the key's other columns. A key may hold the timestamp column (a
// PostgreSQL partitioned table's primary key must hold its partition column), and a
// column named twice in an ORDER BY of a statement's result is ambiguous there, so each
// column is named once.
func (t *Table) orderColumns() []string {
	cols := []string{t.spec.Timestamp}
	for _, k := range t.key {
		if k != t.spec.Timestamp {
			cols = append(cols, k)
		}
	}
	return cols
}

// orderValues are c's values for orderColumns.
func (t *Table) orderValues(c candidate) []any {
	vals := []any{c.ts}
	for i, k := range t.key {
		if k != t.spec.Timestamp {
			vals = append(vals, c.key[i])
		}
	}
	return vals
}

// returnedOrder writes orderColumns as positions (from 1) of the columns a batch's
// delete returns (the key's, then the timestamp): by name, a timestamp that is also a
// key column is returned twice and ambiguous.
func (t *Table) returnedOrder() schema.QueryAppender {
	pos := []string{strconv.Itoa(len(t.key) + 1)}
	for i, k := range t.key {
		if k != t.spec.Timestamp {
			pos = append(pos, strconv.Itoa(i+1))
		}
	}
	return bun.Safe(strings.Join(pos, ", "))
}

// deleteLocked is step 4(c): the children of keys (already locked by this transaction)
// deepest first, then the keys.
func (t *Table) deleteLocked(ctx context.Context, tx bun.IDB, keys [][]any) error {
	for _, c := range t.children {
		if err := t.handleChild(ctx, tx, c, keys); err != nil {
			return err
		}
	}
	return t.deleteByKey(ctx, tx, t.spec.Table, t.key, keys)
}

// deleteByKey deletes table's rows whose cols equal one of keys (rows this transaction
// already locked) in one statement, which the driver shapes (Batch.DeleteKeys).
func (t *Table) deleteByKey(ctx context.Context, tx bun.IDB, table string, cols []string, keys [][]any) error {
	qcols := make([]schema.QueryAppender, len(cols))
	for i, c := range cols {
		qcols[i] = qualified(table, c)
	}
	_, err := tx.ExecContext(ctx, t.drv.DeleteKeys(tx, driver.DeleteKeys{
		Table:   ident(table),
		Columns: qcols,
		Match:   tuple("", cols),
		Keys:    keys,
		In:      keyList(keys),
	}))
	return err
}

// keyEquals is the condition that cols equal key, column by column.
func keyEquals(cols []string, key []any) schema.QueryAppender {
	parts := make([]string, len(cols))
	args := make([]any, 0, 2*len(cols))
	for i, c := range cols {
		parts[i] = "? = ?"
		args = append(args, bun.Ident(c), key[i])
	}
	return bun.SafeQuery(strings.Join(parts, " AND "), args...)
}

// handleChild deletes c's rows under keys, or clears their reference (set_null).
func (t *Table) handleChild(ctx context.Context, tx bun.IDB, c *childNode, keys [][]any) error {
	if c.parent == nil && c.onDelete() == OnDeleteDelete {
		if err := t.deleteByKey(ctx, tx, c.spec.Table, c.foreignKey(), keys); err != nil {
			return fmt.Errorf("child table %s: %w", c.spec.Table, err)
		}
		return nil
	}
	if t.drv.LocksByKey() {
		return t.handleChildByKey(ctx, tx, c, keys)
	}
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

// handleChildByKey is handleChild for a LocksByKey driver: one statement per parent
// key, found by equality on the foreign key, never an IN list or a subquery, which
// InnoDB may run as a scan of the child table that waits on rows other transactions
// hold (MariaDB runs a DELETE's IN subquery as a dependent subquery over every row).
func (t *Table) handleChildByKey(ctx context.Context, tx bun.IDB, c *childNode, keys [][]any) error {
	parents, err := t.parentKeyValues(ctx, tx, c, keys)
	if err != nil {
		return fmt.Errorf("child table %s: %w", c.spec.Table, err)
	}
	fk := c.foreignKey()
	for _, k := range parents {
		switch c.onDelete() {
		case OnDeleteDelete:
			_, err = tx.NewDelete().TableExpr("?", ident(c.spec.Table)).Where("?", keyEquals(fk, k)).Exec(ctx)
		case OnDeleteSetNull:
			q := tx.NewUpdate().TableExpr("?", ident(c.spec.Table))
			for _, col := range fk {
				q = q.Set("? = NULL", bun.Ident(col))
			}
			_, err = q.Where("?", keyEquals(fk, k)).Exec(ctx)
		}
		if err != nil {
			return fmt.Errorf("child table %s: %w", c.spec.Table, err)
		}
	}
	return nil
}

// parentKeyValues is parentKeys read into values: the batch's keys for a direct child,
// or the keys of its parent's rows under them, read level by level by key equality.
func (t *Table) parentKeyValues(ctx context.Context, tx bun.IDB, c *childNode, keys [][]any) ([][]any, error) {
	if c.parent == nil {
		return keys, nil
	}
	p := c.parent
	above, err := t.parentKeyValues(ctx, tx, p, keys)
	if err != nil {
		return nil, err
	}
	var out [][]any
	cols := p.key()
	for _, k := range above {
		rows, err := tx.NewSelect().TableExpr("?", ident(p.spec.Table)).ColumnExpr("?", columnList("", cols)).
			Where("?", keyEquals(p.foreignKey(), k)).Rows(ctx)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			v := make([]any, len(cols))
			dst := make([]any, len(cols))
			for i := range v {
				dst[i] = &v[i]
			}
			if err := rows.Scan(dst...); err != nil {
				_ = rows.Close()
				return nil, err
			}
			for i, x := range v {
				if b, ok := x.([]byte); ok {
					v[i] = string(b) // text keys come back as bytes; sent back as text
				}
			}
			out = append(out, v)
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return nil, err
		}
	}
	return out, nil
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

func candidateKeys(cands []candidate) [][]any {
	keys := make([][]any, len(cands))
	for i, c := range cands {
		keys[i] = c.key
	}
	return keys
}

// scanCandidates reads rows of key columns then the timestamp.
func scanCandidates(rows *sql.Rows, lay *tableLayout) ([]candidate, error) {
	defer rows.Close()
	width := len(lay.keyTypes)
	var out []candidate
	for rows.Next() {
		c := candidate{key: make([]any, width)}
		dst := make([]any, width+1)
		for i := range c.key {
			dst[i] = &c.key[i]
		}
		dst[width] = &c.ts
		if err := rows.Scan(dst...); err != nil {
			return nil, err
		}
		lay.fixKey(c.key)
		out = append(out, c)
	}
	return out, rows.Err()
}
