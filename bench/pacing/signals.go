package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/uptrace/bun"
)

// signalSampler records, beside a frontier run, the candidate signals a controller could
// pace by, so a run can show which of them moves with the foreground's p99 (-signals).
// Each runs on a connection of its own:
//
//   - read: the adaptive pass's default probe (a lookup of the newest key), every 100 ms;
//   - commit: a durable commit of a WAL record, as the foreground's commits are, every 100 ms;
//   - stmt: the load's own statement times, from pg_stat_activity every 100 ms (each
//     session shows its last statement's start and end);
//   - busy: how many of the load's sessions are inside a transaction, every 20 ms. At a
//     fixed arrival rate that count is, by Little's law, proportional to the load's mean
//     latency, flush waits included; walwait is how many of them wait on the WAL flush.
type signalSampler struct {
	mu      sync.Mutex
	read    []sample
	commit  []sample
	stmts   []sample
	busy    []countSample
	cancel  context.CancelFunc
	stopped sync.WaitGroup
}

type sample struct {
	at  time.Time
	lat time.Duration
}

type countSample struct {
	at            time.Time
	busy, walWait int
}

const (
	readProbe   = "SELECT id FROM audit_log ORDER BY id DESC LIMIT 1"
	commitQuery = "SELECT pg_logical_emit_message(true, 'retention-probe', '')"
	// stmtQuery reads the load's own statement times as the server shows them: the last
	// statement of each of the load's sessions that finished one since the last read.
	stmtQuery = `SELECT state_change, (extract(epoch FROM state_change - query_start) * 1e6)::bigint
	FROM pg_stat_activity WHERE application_name = 'pgbench' AND state IN ('idle', 'idle in transaction')
	AND state_change > '%s'::timestamptz ORDER BY state_change`
	busyQuery = `SELECT count(*) FILTER (WHERE state <> 'idle'),
	count(*) FILTER (WHERE state <> 'idle' AND wait_event IN ('WALSync', 'WALWrite', 'WALInsert'))
	FROM pg_stat_activity WHERE application_name = 'pgbench'`
)

func startSignals(ctx context.Context, db *bun.DB) *signalSampler {
	ctx, cancel := context.WithCancel(ctx)
	s := &signalSampler{cancel: cancel}
	s.loop(ctx, db, 100*time.Millisecond, func(ctx context.Context, c *sql.Conn, at time.Time) {
		if lat, err := timed(ctx, c, readProbe); err == nil {
			s.add(&s.read, sample{at, lat})
		}
	})
	s.loop(ctx, db, 100*time.Millisecond, func(ctx context.Context, c *sql.Conn, at time.Time) {
		if lat, err := timed(ctx, c, commitQuery); err == nil {
			s.add(&s.commit, sample{at, lat})
		}
	})
	var seen time.Time
	s.loop(ctx, db, 100*time.Millisecond, func(ctx context.Context, c *sql.Conn, at time.Time) {
		rows, err := c.QueryContext(ctx, fmt.Sprintf(stmtQuery, seen.Format(time.RFC3339Nano)))
		if err != nil {
			if ctx.Err() == nil {
				fmt.Fprintln(os.Stderr, "pacing: the load's statements:", err)
			}
			return
		}
		defer rows.Close()
		// The first read only sets the watermark: what it sees may have ended long ago.
		first := seen.IsZero()
		for rows.Next() {
			var ended time.Time
			var us int64
			if rows.Scan(&ended, &us) == nil {
				seen = ended
				if !first {
					s.add(&s.stmts, sample{at, time.Duration(us) * time.Microsecond})
				}
			}
		}
	})
	s.loop(ctx, db, 20*time.Millisecond, func(ctx context.Context, c *sql.Conn, at time.Time) {
		var cs countSample
		if err := c.QueryRowContext(ctx, busyQuery).Scan(&cs.busy, &cs.walWait); err == nil {
			cs.at = at
			s.mu.Lock()
			s.busy = append(s.busy, cs)
			s.mu.Unlock()
		}
	})
	return s
}

func (s *signalSampler) add(to *[]sample, x sample) {
	s.mu.Lock()
	*to = append(*to, x)
	s.mu.Unlock()
}

func timed(ctx context.Context, c *sql.Conn, q string) (time.Duration, error) {
	start := time.Now()
	rows, err := c.QueryContext(ctx, q)
	if err != nil {
		return 0, err
	}
	for rows.Next() {
	}
	rows.Close()
	return time.Since(start), rows.Err()
}

// loop runs f every period on a connection of its own until ctx ends.
func (s *signalSampler) loop(ctx context.Context, db *bun.DB, period time.Duration, f func(context.Context, *sql.Conn, time.Time)) {
	s.stopped.Add(1)
	go func() {
		defer s.stopped.Done()
		c, err := db.DB.Conn(ctx)
		if err != nil {
			return
		}
		defer c.Close()
		_, _ = c.ExecContext(ctx, "SET synchronous_commit = on")
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				f(ctx, c, time.Now())
			}
		}
	}()
}

func (s *signalSampler) stop() {
	s.cancel()
	s.stopped.Wait()
}

// signalNames are the figures in() returns for a window, in its order.
var signalNames = []string{"fg mean", "read p75", "read p90", "commit p50", "commit p75", "commit p90", "commit p99", "stmt p75", "stmt p90", "busy", "WAL wait"}

// in returns one window's figure for each signal, in signalNames' order: latencies in
// ms, busy and WAL wait as mean sessions.
func (s *signalSampler) in(from, to time.Time, txns []txn) []float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	lats := func(xs []sample) []float64 {
		var out []float64
		for _, x := range xs {
			if !x.at.Before(from) && x.at.Before(to) {
				out = append(out, ms(x.lat))
			}
		}
		return out
	}
	r, c, st := lats(s.read), lats(s.commit), lats(s.stmts)
	var busy, walWait float64
	n := 0
	for _, b := range s.busy {
		if !b.at.Before(from) && b.at.Before(to) {
			busy += float64(b.busy)
			walWait += float64(b.walWait)
			n++
		}
	}
	if n > 0 {
		busy, walWait = busy/float64(n), walWait/float64(n)
	}
	var fgMean float64
	if fg := windowLatencies(txns, from, to); len(fg) > 0 {
		var sum time.Duration
		for _, l := range fg {
			sum += l
		}
		fgMean = ms(sum / time.Duration(len(fg)))
	}
	return []float64{fgMean, quantile(r, 0.75), quantile(r, 0.9),
		quantile(c, 0.5), quantile(c, 0.75), quantile(c, 0.9), quantile(c, 0.99),
		quantile(st, 0.75), quantile(st, 0.9), busy, walWait}
}

// signalRatios are the per-pair ratios (draining ÷ not draining) of every signal,
// [signal][pair]; nil when the run sampled none.
type signalRatios [][]float64

func (r *signalRatios) add(idle, drain []float64) {
	if *r == nil {
		*r = make(signalRatios, len(signalNames))
	}
	for i := range idle {
		if idle[i] > 0 {
			(*r)[i] = append((*r)[i], drain[i]/idle[i])
		}
	}
}

// writeSignals tabulates the median ratio of each signal per pace, beside the
// foreground's p99 ratio, so the signal that moves with it shows.
func writeSignals(w *strings.Builder, rs []frontierResult) {
	have := slices.ContainsFunc(rs, func(r frontierResult) bool { return r.signals != nil })
	if !have {
		return
	}
	fmt.Fprintf(w, "### Candidate signals (`-signals`)\n\n")
	fmt.Fprintf(w, "Median over the pairs of each signal's ratio (draining window ÷ the not-draining window before it). fg p99 is the benchmark's ratio; fg mean the foreground's mean latency; read and commit are probes every 100 ms (a newest-key lookup; a durable commit of a WAL record); stmt is the load's own statement times as the server shows them (pg_stat_activity every 100 ms: state_change − query_start of the last statement of each session that finished one since the last read); busy is the mean number of the load's sessions inside a transaction, sampled every 20 ms (Little's law: at a fixed rate, proportional to the mean latency), WAL wait those waiting on the WAL.\n\n")
	fmt.Fprintf(w, "| pace | fg p99 | %s |\n|---|---:|%s\n", strings.Join(signalNames, " | "), strings.Repeat("---:|", len(signalNames)))
	for _, r := range rs {
		if r.signals == nil {
			continue
		}
		fmt.Fprintf(w, "| %s | %.2f |", r.v.name, median(r.ratios))
		for _, xs := range r.signals {
			fmt.Fprintf(w, " %.2f |", median(xs))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
}
