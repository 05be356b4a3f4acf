package main

import (
	"context"
	"database/sql"
	"errors"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	gomysql "github.com/go-sql-driver/mysql"
)

// The foreground is the application sharing the table with the purge, at a fixed rate
// (open loop: a transaction's latency runs from when it was due, so a stall that delays
// the next ones counts against them too, as pgbench -R measures). It connects as an
// application would, with the server's defaults (REPEATABLE READ, the server's lock wait
// timeout), not the purge's session settings. Nine transactions in ten read a random
// row, update a random unexpired one, and insert a new row and a child of it; the tenth
// is a "touch": it moves one of the oldest expired rows past the cutoff (an application
// that extends an old record's life), after which that row must be kept.
type foreground struct {
	db      *sql.DB
	shape   shape
	rate    int
	workers int

	front atomic.Int64 // the oldest expired id left, read about once a second

	mu   sync.Mutex
	txns []txn
	tally
}

// touchSpan is how far past the oldest expired row a touch reaches: a row the purge
// is about to delete, or has selected and not yet deleted.
const touchSpan = 5000

// txn is one foreground transaction: when it was due, how long it took from then, and
// its error's MySQL number (0: committed; -1: another error).
type txn struct {
	due   time.Time
	lat   time.Duration
	err   int
	touch bool
}

// tally is what the foreground changed that must be kept.
type tally struct {
	inserted int64
	revived  []int64
}

func (t *tally) revivedIDs() []int64 { return slices.Clone(t.revived) }

// running is a started foreground.
type running struct {
	f      *foreground
	cancel context.CancelFunc
	done   chan struct{}
}

func (f *foreground) start(ctx context.Context) *running {
	ctx, cancel := context.WithCancel(ctx)
	r := &running{f: f, cancel: cancel, done: make(chan struct{})}
	f.front.Store(1)
	due := make(chan int, 100_000)
	var wg sync.WaitGroup
	for w := 0; w < f.workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f.work(due)
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		f.trackFront(ctx)
	}()
	go func() {
		f.schedule(ctx, due)
		close(due)
		wg.Wait()
		close(r.done)
	}()
	return r
}

// stop ends the schedule, waits for the transactions already due, and returns them all.
func (r *running) stop() ([]txn, tally) {
	r.cancel()
	<-r.done
	r.f.mu.Lock()
	defer r.f.mu.Unlock()
	return slices.Clone(r.f.txns), tally{inserted: r.f.inserted, revived: slices.Clone(r.f.revived)}
}

// schedule sends the sequence number of each transaction when it is due; the due time
// is start + i/rate, so a late worker does not move the schedule.
func (f *foreground) schedule(ctx context.Context, due chan<- int) {
	start := time.Now()
	every := time.Second / time.Duration(f.rate)
	for i := 0; ; i++ {
		at := start.Add(time.Duration(i) * every)
		if d := time.Until(at); d > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(d):
			}
		} else if ctx.Err() != nil {
			return
		}
		f.mu.Lock()
		f.txns = append(f.txns, txn{due: at, err: -2}) // -2: not yet run
		f.mu.Unlock()
		due <- i
	}
}

func (f *foreground) work(due <-chan int) {
	// Transactions run without the schedule's context: one due before the end runs to
	// its end, however long a lock holds it.
	ctx := context.Background()
	for i := range due {
		f.mu.Lock()
		at := f.txns[i].due
		f.mu.Unlock()
		var err error
		if i%10 == 9 {
			err = f.touch(ctx)
		} else {
			err = f.oltp(ctx)
		}
		lat := time.Since(at)
		f.mu.Lock()
		f.txns[i].lat, f.txns[i].err, f.txns[i].touch = lat, errNumber(err), i%10 == 9
		f.mu.Unlock()
	}
}

func errNumber(err error) int {
	if err == nil {
		return 0
	}
	var me *gomysql.MySQLError
	if errors.As(err, &me) {
		return int(me.Number)
	}
	return -1
}

func (f *foreground) oltp(ctx context.Context) (err error) {
	tx, err := f.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	n := int64(f.shape.rows)
	var payload string
	err = tx.QueryRowContext(ctx, "SELECT payload FROM events WHERE id = ?", 1+rand.Int64N(n)).Scan(&payload)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	kept := f.shape.firstKept() + rand.Int64N(f.shape.kept())
	if _, err = tx.ExecContext(ctx, "UPDATE events SET state = 'updated' WHERE id = ?", kept); err != nil {
		return err
	}
	res, err := tx.ExecContext(ctx, "INSERT INTO events (created_at, state, payload) VALUES (UTC_TIMESTAMP(6), 'new', REPEAT('y', 200))")
	if err != nil {
		return err
	}
	id, err := res.LastInsertId()
	if err != nil {
		return err
	}
	if _, err = tx.ExecContext(ctx, "INSERT INTO event_items (event_id, note) VALUES (?, 'new')", id); err != nil {
		return err
	}
	if err = tx.Commit(); err != nil {
		return err
	}
	f.mu.Lock()
	f.inserted++
	f.mu.Unlock()
	return nil
}

func (f *foreground) touch(ctx context.Context) error {
	id := f.front.Load() + rand.Int64N(touchSpan)
	if id >= f.shape.firstKept() {
		return nil // nothing expired there any more: a no-op, still timed
	}
	res, err := f.db.ExecContext(ctx, "UPDATE events SET created_at = UTC_TIMESTAMP(6), state = 'touched' WHERE id = ? AND created_at < ?",
		id, f.shape.cutoffSQL())
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err == nil && n == 1 {
		f.mu.Lock()
		f.revived = append(f.revived, id)
		f.mu.Unlock()
	}
	return nil
}

// trackFront reads the oldest expired id left about once a second, on a connection of
// its own; it is not timed.
func (f *foreground) trackFront(ctx context.Context) {
	for {
		var id sql.NullInt64
		err := f.db.QueryRowContext(ctx, "SELECT id FROM events WHERE created_at < ? ORDER BY created_at, id LIMIT 1", f.shape.cutoffSQL()).Scan(&id)
		if err == nil && id.Valid {
			f.front.Store(id.Int64)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}

// window is the latencies (sorted) and errors of the transactions due in [from, to).
type window struct {
	lats   []time.Duration
	errs   map[int]int
	missed int // due, never run (the foreground was stopped first)
}

// kind picks transactions: all, or only those that touch no expired row.
type kind int

const (
	allTxns kind = iota
	oltpOnly
)

func windowOf(txns []txn, from, to time.Time, k kind) window {
	w := window{errs: map[int]int{}}
	for _, t := range txns {
		if t.due.Before(from) || !t.due.Before(to) || (k == oltpOnly && t.touch) {
			continue
		}
		switch {
		case t.err == -2:
			w.missed++
		case t.err != 0:
			w.errs[t.err]++
			w.lats = append(w.lats, t.lat)
		default:
			w.lats = append(w.lats, t.lat)
		}
	}
	slices.Sort(w.lats)
	return w
}

func (w window) quantile(q float64) time.Duration {
	if len(w.lats) == 0 {
		return 0
	}
	return w.lats[int(q*float64(len(w.lats)-1))]
}
