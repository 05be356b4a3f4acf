package passes

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/uptrace/bun"
)

// tableSweep is one sweep over a Table: the keyset cursor lives here, and on PostgreSQL
// the connection the sweep's batches run on.
type tableSweep struct {
	t       *Table
	cursor  *candidate
	layout  *tableLayout // read before the first batch
	skipped [][]any      // keys bisection skipped in this sweep
	exclude [][]any      // skipped keys left out after a rewind to the start
	// The quarantine as the sweep's first batch read it (see loadQuarantine).
	quarantineRead bool
	held           [][]any // quarantined keys not yet due: left out (up to maxExcluded)
	// setAside are the quarantined keys (KeyText) not yet due past the first
	// maxExcluded: a batch that meets one sets it aside instead of trying it again.
	setAside map[string]bool
	// refs are the unlisted references a failed batch checks for itself (directReferences).
	refs     []reference
	refsRead bool
	due      map[string]bool // quarantined keys (KeyText) due for another try
	pg       *pinnedSweep    // PostgreSQL: one connection for the sweep (and its lock)
	pid      int             // its backend, to cancel a statement with
	// For the hygiene after a big sweep (table_hygiene.go): rows deleted so far, and the
	// table's size estimate when the sweep began (PostgreSQL).
	deleted    int
	sizeBefore float64
	sizeRead   bool
	backend    atomic.Int64 // pid, for the pacing signals' goroutine
	// cancelStatement asks the server to cancel the sweep's running statement.
	cancelStatement func()
}

// BackendPID returns the sweep connection's backend, 0 before the first batch.
func (s *tableSweep) BackendPID() int { return int(s.backend.Load()) }

// conn returns what the batch runs on. On PostgreSQL that is one connection held for the
// sweep, whose backend pid is known, because pgdriver does not interrupt a running
// statement when its context is cancelled: cancelOnDone asks the server to.
func (s *tableSweep) conn(ctx context.Context) (bun.IDB, error) {
	if !s.t.postgres {
		return s.t.db, nil
	}
	if s.pg == nil {
		p, err := pinSweep(ctx, s.t.db, s.t.sweepLock)
		if err != nil {
			return nil, err
		}
		if p.pid, err = s.t.pinSession(ctx, p.conn); err != nil {
			discard(p.conn) // the lock, if taken, goes with the connection
			return nil, err
		}
		s.pg, s.pid = p, p.pid
		s.backend.Store(int64(s.pid))
	}
	return s.pg.conn, nil
}

// cancelOnDone cancels the sweep connection's running statement on the server when ctx
// ends (a batch timeout, a stop past its grace period), and returns the function that
// disarms it.
// The function that cancels is built once per sweep (it only depends on the backend),
// so arming the watcher costs one registration per batch and no closure.
func (s *tableSweep) cancelOnDone(ctx context.Context) func() bool {
	if s.pg == nil || ctx.Done() == nil {
		return disarmed
	}
	if s.cancelStatement == nil {
		db, pid := s.t.db, s.pid
		s.cancelStatement = func() {
			cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_, _ = db.ExecContext(cctx, "SELECT pg_cancel_backend(?)", pid)
		}
	}
	return context.AfterFunc(ctx, s.cancelStatement)
}

func disarmed() bool { return false }

// Close runs the hygiene of a big sweep and gives the sweep's lock and connection back.
// The lock stays held through the hygiene, so no other member sweeps the table while
// it is being analyzed or vacuumed.
func (s *tableSweep) Close() error {
	if s.pg == nil {
		return s.afterSweep(nil)
	}
	err := resetSession(s.pg.conn)
	if err == nil {
		err = s.afterSweep(&s.pg.conn)
	}
	// The hygiene sets its own timeout, so the session is reset once more. No other user
	// may inherit the sweep's settings: if that fails the connection (and the lock with
	// it) is closed instead of going back to the pool.
	if rerr := resetSession(s.pg.conn); rerr != nil {
		discard(s.pg.conn)
		s.pg = nil
		return errors.Join(err, rerr)
	}
	err = errors.Join(err, s.pg.release())
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
	n, err := s.purgeBatch(ctx, batchSize, olderThan)
	s.deleted += n
	return n, err
}

func (s *tableSweep) purgeBatch(ctx context.Context, batchSize int, olderThan time.Time) (int, error) {
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
		if err := s.readTableSize(ctx, db); err != nil {
			return 0, fmt.Errorf("pass %q: %w", t.name, err)
		}
	}
	cut := t.cutoff(olderThan, s.layout)
	if !s.quarantineRead {
		if err := s.loadQuarantine(ctx, db, cut); err != nil {
			return 0, err
		}
	}
	stop := s.cancelOnDone(ctx)
	defer stop()
	var read, deleted []candidate
	if t.singleStatement() {
		deleted, err = t.deleteNext(ctx, db, batchSize, cut, s.position(), s.layout)
		read = deleted
	} else {
		read, deleted, err = t.deleteNextInTx(ctx, db, batchSize, cut, s.position(), s.layout)
	}
	if err == nil {
		// The cursor goes past the parents passed over for their children's locks too, so
		// the rest of the table is reached; the rewind at the end comes back to them.
		s.advance(read, t.postgres || !t.singleStatement())
		s.deletedKeys(ctx, candidateKeys(deleted))
		switch {
		case len(read) < batchSize:
			s.passedOver(ctx, db, cut)
		case len(deleted) < len(read):
			ReportMoreWaiting(ctx)
		}
		return len(deleted), nil
	}
	if !IsRowSpecific(err) || ctx.Err() != nil {
		return 0, fmt.Errorf("pass %q: delete batch: %w", t.name, err)
	}
	return s.bisectNext(ctx, db, batchSize, cut)
}

// singleStatement reports whether a batch can be one statement: no children to handle
// first, so no explicit transaction is needed. A statement timeout does not need one:
// PostgreSQL's is set on the sweep's connection (pinSession), SQLite's is the batch's
// context.
func (t *Table) singleStatement() bool {
	return len(t.children) == 0
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
// keys it already skipped when it went back to the start (see passedOver) and the
// quarantined keys not yet due.
type position struct {
	after   *candidate
	exclude [][]any
}

func (s *tableSweep) position() position {
	return position{after: s.cursor, exclude: s.excluded(s.exclude)}
}

func candidateKeys(cands []candidate) [][]any {
	keys := make([][]any, len(cands))
	for i, c := range cands {
		keys[i] = c.key
	}
	return keys
}

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
