package main

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/uptrace/bun"
)

// fgApp is the application_name of the foreground's connections, which the lock sampler
// looks for.
const fgApp = "partbench-foreground"

// load is the foreground: workers connections sharing a fixed rate of transactions, each
// a point read of a kept fixture row and an insert at now() (the shape of bench/drain's
// pgbench script, on the partitioned table), timed by the client; beside it a sampler
// reads pg_stat_activity every 10 ms for foreground statements waiting on a lock.
type load struct {
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	mu      sync.Mutex
	samples []sample
	lockMax time.Duration // longest lock wait the sampler saw
	err     error
}

type sample struct {
	start time.Time
	took  time.Duration
}

var nextID atomic.Int64

func init() { nextID.Store(1 << 40) }

func startLoad(ctx context.Context, db *bun.DB, f fixture, rate, workers int) (*load, error) {
	ctx, cancel := context.WithCancel(ctx)
	l := &load{cancel: cancel}
	conns := make([]*sql.Conn, workers)
	for i := range conns {
		c, err := db.DB.Conn(ctx)
		if err == nil {
			_, err = c.ExecContext(ctx, "SET application_name = '"+fgApp+"'")
		}
		if err != nil {
			cancel()
			return nil, fmt.Errorf("foreground connection: %w", err)
		}
		conns[i] = c
	}
	interval := time.Duration(int64(time.Second) * int64(workers) / int64(rate))
	for i, c := range conns {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			defer c.Close()
			rng := rand.New(rand.NewPCG(uint64(i), 7))
			tick := time.NewTicker(interval)
			defer tick.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
				}
				d := f.parts - 2 + rng.IntN(2) // a kept partition
				j := rng.IntN(f.rows)
				start := time.Now()
				err := l.one(ctx, c, f, d, j)
				took := time.Since(start)
				if ctx.Err() != nil {
					return
				}
				l.mu.Lock()
				if err != nil && l.err == nil {
					l.err = err
				}
				l.samples = append(l.samples, sample{start: start, took: took})
				l.mu.Unlock()
			}
		}()
	}
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			var us sql.NullInt64
			err := db.DB.QueryRowContext(ctx, `SELECT max(extract(epoch FROM clock_timestamp() - query_start) * 1e6)::bigint
FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'`, fgApp).Scan(&us)
			if err != nil || !us.Valid {
				continue
			}
			l.mu.Lock()
			l.lockMax = max(l.lockMax, time.Duration(us.Int64)*time.Microsecond)
			l.mu.Unlock()
		}
	}()
	return l, nil
}

func (l *load) one(ctx context.Context, c *sql.Conn, f fixture, d, j int) error {
	tx, err := c.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var payload string
	if err := tx.QueryRowContext(ctx, "SELECT payload FROM "+f.table()+" WHERE at = $1 AND id = $2", f.at(d, j), int64(d*f.rows+j+1)).Scan(&payload); err != nil {
		return fmt.Errorf("foreground read: %w", err)
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO "+f.table()+" (id, at, payload) VALUES ($1, now(), repeat('x', 100))", nextID.Add(1)); err != nil {
		return fmt.Errorf("foreground insert: %w", err)
	}
	return tx.Commit()
}

// fgStats is the foreground during a purge.
type fgStats struct {
	n            int
	p99, longest time.Duration
	lockWait     time.Duration // longest sampled wait on a lock
}

// stop ends the load and returns the transactions begun between start and end.
func (l *load) stop(start, end time.Time) (fgStats, error) {
	l.cancel()
	l.wg.Wait()
	var took []time.Duration
	for _, s := range l.samples {
		if !s.start.Before(start) && !s.start.After(end) {
			took = append(took, s.took)
		}
	}
	if l.err != nil {
		return fgStats{}, l.err
	}
	if len(took) == 0 {
		return fgStats{lockWait: l.lockMax}, nil
	}
	slices.Sort(took)
	return fgStats{n: len(took), p99: took[min(len(took)-1, len(took)*99/100)], longest: took[len(took)-1], lockWait: l.lockMax}, nil
}
