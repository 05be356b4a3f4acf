package passes

import (
	"context"
	"database/sql"
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
	key      []string     // the key's columns
	children []*childNode // deepest first
	blockers []*childNode // direct children with on_delete: block
	postgres bool
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
	t := &Table{db: db, name: name, spec: spec, key: spec.keyColumns(), children: children, postgres: isPostgres(db)}
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

// tableSweep is one sweep over a Table: the keyset cursor lives here, and on PostgreSQL
// the connection the sweep's batches run on.
type tableSweep struct {
	t       *Table
	cursor  *candidate
	layout  *tableLayout // read before the first batch
	skipped [][]any      // keys bisection skipped in this sweep
	exclude [][]any      // skipped keys left out after a rewind to the start
	pg      *bun.Conn    // PostgreSQL: one connection for the sweep
	pid     int          // its backend, to cancel a statement with
}

// conn returns what the batch runs on. On PostgreSQL that is one connection held for the
// sweep, whose backend pid is known, because pgdriver does not interrupt a running
// statement when its context is cancelled: cancelOnDone asks the server to.
func (s *tableSweep) conn(ctx context.Context) (bun.IDB, error) {
	if !s.t.postgres {
		return s.t.db, nil
	}
	if s.pg == nil {
		c, err := s.t.db.Conn(ctx)
		if err != nil {
			return nil, err
		}
		if err := c.QueryRowContext(ctx, "SELECT pg_backend_pid()").Scan(&s.pid); err != nil {
			_ = c.Close()
			return nil, err
		}
		s.pg = &c
	}
	return *s.pg, nil
}

// cancelOnDone cancels the sweep connection's running statement on the server when ctx
// ends (a batch timeout, a stop past its grace period), and returns the function that
// disarms it.
func (s *tableSweep) cancelOnDone(ctx context.Context) func() bool {
	if s.pg == nil {
		return func() bool { return false }
	}
	db, pid := s.t.db, s.pid
	return context.AfterFunc(ctx, func() {
		cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, _ = db.ExecContext(cctx, "SELECT pg_cancel_backend(?)", pid)
	})
}

// Close gives the sweep's connection back.
func (s *tableSweep) Close() error {
	if s.pg == nil {
		return nil
	}
	err := s.pg.Close()
	s.pg = nil
	return err
}

// candidate is one row a batch read: its key (one value per key column) and timestamp.
type candidate struct {
	key []any
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
	db, err := s.conn(ctx)
	if err != nil {
		return 0, fmt.Errorf("pass %q: %w", t.name, err)
	}
	if s.layout == nil {
		if s.layout, err = t.readLayout(ctx, db); err != nil {
			return 0, fmt.Errorf("pass %q: %w", t.name, err)
		}
	}
	cut := t.cutoff(olderThan, s.layout)
	stop := s.cancelOnDone(ctx)
	defer stop()
	var deleted []candidate
	if t.singleStatement() {
		deleted, err = t.deleteNext(ctx, db, batchSize, cut, s.position(), s.layout)
	} else {
		deleted, err = t.deleteNextInTx(ctx, db, batchSize, cut, s.position(), s.layout)
	}
	if err == nil {
		s.advance(deleted, t.postgres || !t.singleStatement())
		if len(deleted) < batchSize {
			s.passedOver(ctx, db, cut)
		}
		return len(deleted), nil
	}
	if !IsRowSpecific(err) || ctx.Err() != nil {
		return 0, fmt.Errorf("pass %q: delete batch: %w", t.name, err)
	}
	return s.bisectNext(ctx, db, batchSize, cut)
}

// singleStatement reports whether a batch can be one statement: no children to handle
// first and no statement timeout to set, so no explicit transaction is needed.
func (t *Table) singleStatement() bool {
	return len(t.children) == 0 && t.spec.StatementTimeout == 0
}

// advance moves the cursor to the greatest (timestamp, key) of the batch: its last row
// when the database ordered it (PostgreSQL's collations and numeric order are its own),
// else the greatest as Go compares them (SQLite's default binary collation agrees). A
// cursor short of the batch's end only makes the next batch re-read deleted ground.
func (s *tableSweep) advance(batch []candidate, ordered bool) {
	if ordered && len(batch) > 0 {
		c := batch[len(batch)-1]
		s.cursor = &c
		return
	}
	for i := range batch {
		if s.cursor == nil || compareCandidates(batch[i], *s.cursor) > 0 {
			c := batch[i]
			s.cursor = &c
		}
	}
}

// bisectNext handles a batch that failed on a constraint: it reads the same candidates
// without deleting, moves the cursor past them, and deletes them half by half.
func (s *tableSweep) bisectNext(ctx context.Context, db bun.IDB, batchSize int, cut cutoff) (int, error) {
	t := s.t
	cands, err := t.candidates(ctx, db, batchSize, cut, s.position(), false, s.layout)
	if err != nil {
		return 0, fmt.Errorf("pass %q: select batch: %w", t.name, err)
	}
	s.advance(cands, true)
	keys := make([][]any, len(cands))
	for i, c := range cands {
		keys[i] = c.key
	}
	deleted, skipped, err := t.deleteOrBisect(ctx, db, keys, cut, s.layout)
	s.skipped = append(s.skipped, skipped...)
	if err == nil && deleted+len(skipped) < batchSize {
		s.passedOver(ctx, db, cut)
	}
	return deleted, err
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

// candidates reads the next n eligible rows after the cursor, in (timestamp, key)
// order; with lock, on PostgreSQL, it locks them and skips rows another transaction holds.
func (t *Table) candidates(ctx context.Context, db bun.IDB, n int, cut cutoff, pos position, lock bool, lay *tableLayout) ([]candidate, error) {
	q := t.nextQuery(db, n, cut, pos).ColumnExpr("?, ?", columnList(t.spec.Table, t.key), t.col(t.spec.Timestamp))
	if lock && t.postgres {
		q = q.For("UPDATE SKIP LOCKED")
	}
	rows, err := q.Rows(ctx)
	if err != nil {
		return nil, err
	}
	return scanCandidates(rows, lay)
}

// position is where a sweep's next batch starts: after the cursor, leaving out the
// keys it already skipped when it went back to the start (see passedOver).
type position struct {
	after   *candidate
	exclude [][]any
}

func (s *tableSweep) position() position { return position{after: s.cursor, exclude: s.exclude} }

// nextQuery selects (without columns) the next n eligible rows after the position.
func (t *Table) nextQuery(db bun.IDB, n int, cut cutoff, pos position) *bun.SelectQuery {
	q := t.eligible(db.NewSelect().TableExpr("?", ident(t.spec.Table)), cut)
	if after := pos.after; after != nil {
		q = q.Where("(?, ?) > (?, ?)", t.col(t.spec.Timestamp), columnList(t.spec.Table, t.key), after.ts, bun.List(after.key))
	}
	if len(pos.exclude) > 0 {
		q = q.Where("? NOT IN (?)", tuple(t.spec.Table, t.key), keyList(pos.exclude))
	}
	return q.OrderExpr("?, ?", t.col(t.spec.Timestamp), columnList(t.spec.Table, t.key)).Limit(int64(n))
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
// candidates, delete or clear their children, delete them by key.
func (t *Table) deleteNextInTx(ctx context.Context, db bun.IDB, n int, cut cutoff, pos position, lay *tableLayout) ([]candidate, error) {
	var deleted []candidate
	err := TxUnitOfWork{DB: db}.Execute(ctx, func(ctx context.Context) error {
		tx := DB(ctx, db)
		if err := t.setStatementTimeout(ctx, tx); err != nil {
			return err
		}
		cands, err := t.candidates(ctx, tx, n, cut, pos, true, lay)
		if err != nil || len(cands) == 0 {
			deleted = nil
			return err
		}
		keys := make([][]any, len(cands))
		for i, c := range cands {
			keys[i] = c.key
		}
		if err := t.deleteLocked(ctx, tx, keys); err != nil {
			return err
		}
		deleted = cands
		return nil
	})
	return deleted, err
}

func (t *Table) setStatementTimeout(ctx context.Context, tx bun.IDB) error {
	if !t.postgres || t.spec.StatementTimeout <= 0 {
		return nil
	}
	_, err := tx.ExecContext(ctx, fmt.Sprintf("SET LOCAL statement_timeout = %d", t.spec.StatementTimeout.Milliseconds()))
	return err
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

// deleteOrBisect deletes keys in one transaction; when that fails on a constraint, it
// splits the keys and tries each half, down to single rows, which it skips (and
// returns).
func (t *Table) deleteOrBisect(ctx context.Context, db bun.IDB, keys [][]any, cut cutoff, lay *tableLayout) (deleted int, skipped [][]any, err error) {
	if len(keys) == 0 {
		return 0, nil, nil
	}
	n, err := t.deleteKeys(ctx, db, keys, cut, lay)
	if err == nil {
		return n, nil, nil
	}
	if !IsRowSpecific(err) || ctx.Err() != nil {
		return 0, nil, fmt.Errorf("pass %q: delete batch: %w", t.name, err)
	}
	if len(keys) == 1 {
		ReportSkipped(ctx, t.reportedKey(keys[0]), err)
		return 0, keys, nil
	}
	mid := len(keys) / 2
	for _, half := range [][][]any{keys[:mid], keys[mid:]} {
		d, s, err := t.deleteOrBisect(ctx, db, half, cut, lay)
		deleted, skipped = deleted+d, append(skipped, s...)
		if err != nil {
			return deleted, skipped, err
		}
	}
	return deleted, skipped, nil
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
// others do not (an integrity constraint, or a deadlock or serialization failure that
// outlived the retries), so bisection can isolate them. Anything else (a lost
// connection, a missing table, a timeout) would fail every half alike and goes to
// supervision instead.
func IsRowSpecific(err error) bool {
	var pgErr pgdriver.Error
	if errors.As(err, &pgErr) {
		code := pgErr.Field('C')
		return strings.HasPrefix(code, "23") || code == "40001" || code == "40P01"
	}
	msg := err.Error()
	return strings.Contains(msg, "constraint failed") || strings.Contains(msg, "SQLITE_CONSTRAINT")
}

// deleteKeys deletes exactly keys (those still eligible) in one transaction: bisection
// runs each part through it.
func (t *Table) deleteKeys(ctx context.Context, db bun.IDB, keys [][]any, cut cutoff, lay *tableLayout) (int, error) {
	var deleted int
	err := TxUnitOfWork{DB: db}.Execute(ctx, func(ctx context.Context) error {
		tx := DB(ctx, db)
		if err := t.setStatementTimeout(ctx, tx); err != nil {
			return err
		}
		locked, err := t.lock(ctx, tx, keys, cut, lay)
		if err != nil || len(locked) == 0 {
			deleted = 0
			return err
		}
		if err := t.deleteLocked(ctx, tx, locked); err != nil {
			return err
		}
		deleted = len(locked)
		return nil
	})
	return deleted, err
}

// lock re-reads which of keys are still eligible and, on PostgreSQL, locks them, skipping
// rows another transaction holds.
func (t *Table) lock(ctx context.Context, tx bun.IDB, keys [][]any, cut cutoff, lay *tableLayout) ([][]any, error) {
	q := t.eligible(tx.NewSelect().TableExpr("?", ident(t.spec.Table)).ColumnExpr("?, ?", columnList(t.spec.Table, t.key), t.col(t.spec.Timestamp)), cut).
		Where("? IN (?)", tuple(t.spec.Table, t.key), keyList(keys))
	if t.postgres {
		q = q.For("UPDATE SKIP LOCKED")
	}
	rows, err := q.Rows(ctx)
	if err != nil {
		return nil, err
	}
	cands, err := scanCandidates(rows, lay)
	if err != nil {
		return nil, err
	}
	locked := make([][]any, len(cands))
	for i, c := range cands {
		locked[i] = c.key
	}
	return locked, nil
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

// DryRunResult is what a sweep at a cutoff would do.
type DryRunResult struct {
	// Eligible is how many rows a sweep would delete.
	Eligible int64
	// Blocked is how many expired rows block children keep.
	Blocked int64
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

// OldestExpired returns the timestamp of the oldest row a sweep at cutoff would delete,
// and false when there is none: how far behind the retention is.
func (t *Table) OldestExpired(ctx context.Context, at time.Time) (time.Time, bool, error) {
	lay, err := t.readLayout(ctx, t.db)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("pass %q: oldest expired row: %w", t.name, err)
	}
	var raw any
	err = t.eligible(t.db.NewSelect().TableExpr("?", ident(t.spec.Table)), t.cutoff(at, lay)).
		ColumnExpr("?", t.oldestExpr()).Scan(ctx, &raw)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("pass %q: oldest expired row: %w", t.name, err)
	}
	return t.timeOf(raw, lay)
}
