package passes

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/uptrace/bun"
)

// tableSweep is one sweep over a Table: the keyset cursor lives here, and, when the
// driver pins sweeps (PostgreSQL), the connection the sweep's batches run on.
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
	pg       *pinnedSweep    // a pinning driver's one connection for the sweep (and its lock)
	pid      int             // its backend, to cancel a statement with
	// For the hygiene after a big sweep (table_hygiene.go): rows deleted so far, and the
	// table's size estimate when the sweep began (PostgreSQL).
	deleted    int
	sizeBefore float64
	sizeRead   bool
	backend    atomic.Int64 // pid, for the pacing signals' goroutine
	// cancelStatement asks the server to cancel the sweep's running statement.
	cancelStatement func()
	// retire is the retire phase of a pass with partitions (table_partitions.go).
	retire *retirePhase
}

// BackendPID returns the sweep connection's backend, 0 before the first batch.
func (s *tableSweep) BackendPID() int { return int(s.backend.Load()) }

// conn returns what the batch runs on. When the driver pins sweeps that is one
// connection held for the sweep, whose backend is known, because its client library does
// not interrupt a running statement when its context is cancelled: cancelOnDone asks the
// server to.
func (s *tableSweep) conn(ctx context.Context) (bun.IDB, error) {
	if !s.t.drv.PinsSweep() {
		return s.t.db, nil
	}
	if s.pg == nil {
		p, err := pinSweep(ctx, s.t.drv, s.t.db, s.t.sweepLock)
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
		d, db, pid := s.t.drv, s.t.db, s.pid
		s.cancelStatement = func() {
			cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = d.CancelStatement(cctx, db, pid)
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
	err := s.t.drv.ResetSession(context.Background(), s.pg.conn)
	if err == nil {
		err = s.afterSweep(&s.pg.conn)
	}
	// The hygiene sets its own timeout, so the session is reset once more. No other user
	// may inherit the sweep's settings: if that fails the connection (and the lock with
	// it) is closed instead of going back to the pool.
	if rerr := s.t.drv.ResetSession(context.Background(), s.pg.conn); rerr != nil {
		discard(s.pg.conn)
		s.pg = nil
		return errors.Join(err, rerr)
	}
	err = errors.Join(err, s.pg.release())
	s.pg = nil
	return err
}

// PurgeBatch deletes the next batch; see Table. Its error carries the class the driver
// gives it (core.ErrSchemaDrift for a table or column that went away, ...), so
// supervision decides from core's classes and never reads a database's codes.
func (s *tableSweep) PurgeBatch(ctx context.Context, batchSize int, olderThan time.Time) (int, error) {
	n, err := s.purgeBatch(ctx, batchSize, olderThan)
	s.deleted += n
	return n, s.t.drv.Classify(err)
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
