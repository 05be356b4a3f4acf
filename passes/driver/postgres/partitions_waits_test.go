package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/driver"
	"github.com/retentionkit/retention/passes/passtest"
)

// waitSample is one look at the foreground session and the sweep's detach.
type waitSample struct {
	blockers string  // pg_blocking_pids of the foreground session, comma-separated
	detach   int64   // the backend running the sweep's DETACH now, 0 for none
	waitedMs float64 // how long the foreground's ungranted lock has waited (pg_locks.waitstart)
}

// No foreground statement waits on the retire phase longer than its lock timeout: a
// session holds ACCESS SHARE on the expired partition, so the sweep's detach waits for
// it; a foreground query on another partition, through the table, arrives meanwhile.
// Watching pg_stat_activity and pg_locks until the foreground query is done: whenever
// it waits, the only session it waits for is the sweep's connection, the backend
// pg_stat_activity showed running its DETACH, pg_locks never shows the wait older than the lock_timeout (and
// a second of slack), and the statement ends at its lock_timeout (reported contended,
// SQLSTATE 55P03), so the foreground's wait ends with it. With a plain
// DETACH (concurrently: false: ACCESS EXCLUSIVE on the table) the foreground does
// queue, and is let through when the detach gives up; with CONCURRENTLY it never waits.
// The longest wait pg_locks saw is logged beside the lock timeout; no clock of the
// test's own is asserted on.
func TestPartitionsForegroundWaitsEndAtLockTimeout(t *testing.T) {
	t.Parallel()
	for _, concurrently := range []bool{false, true} {
		t.Run(fmt.Sprintf("concurrently=%v", concurrently), func(t *testing.T) {
			t.Parallel()
			foregroundWaits(t, concurrently)
		})
	}
}

func foregroundWaits(t *testing.T, concurrently bool) {
	db := passtest.Postgres(t)
	ctx := context.Background()
	w := newTwins(t, db, "TIMESTAMPTZ", monthly, monthlyRows)
	var schema string
	if err := db.NewRaw("SELECT current_schema()").Scan(ctx, &schema); err != nil {
		t.Fatal(err)
	}
	holder, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = holder.Rollback() }()
	if _, err := holder.ExecContext(ctx, "LOCK TABLE events_may IN ACCESS SHARE MODE"); err != nil {
		t.Fatal(err)
	}
	fg, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer fg.Close()
	var fgPid int64
	if err := fg.QueryRowContext(ctx, "SELECT pg_backend_pid()").Scan(&fgPid); err != nil {
		t.Fatal(err)
	}
	// Long enough that the foreground, started once the detach shows, reaches its lock
	// while the detach still waits, even on a machine crowded by make test: at 300 ms a
	// CI run saw the detach give up first, and the test exercised no wait.
	lockTimeout := 2 * time.Second
	tbl := w.table("events", &passes.PartitionSpec{Concurrently: &concurrently, LockTimeout: lockTimeout}, nil)
	type result struct {
		swept partSwept
		err   error
	}
	swept := make(chan result, 1)
	go func() { // one sweep, as sweepReported runs it, off the test's goroutine
		var res result
		defer func() { swept <- res }()
		p, err := tbl.Factory()(ctx)
		if err != nil {
			res.err = err
			return
		}
		if c, ok := p.(passes.Closer); ok {
			defer func() { _ = c.Close() }()
		}
		for res.swept.batches < 100 {
			r := &partReporter{}
			n, err := p.PurgeBatch(passes.WithBatchReporter(ctx, r), 3, time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC))
			if err != nil {
				res.err = err
				return
			}
			res.swept.batches++
			res.swept.reports = append(res.swept.reports, r.reports...)
			if n+r.skipped < 3 && !r.more {
				return
			}
		}
		res.err = errors.New("the sweep does not end")
	}()

	look := func() waitSample {
		t.Helper()
		var s waitSample
		err := db.NewRaw(`SELECT
				array_to_string(pg_blocking_pids(?), ',') AS blockers,
				coalesce((SELECT max(pid) FROM pg_stat_activity WHERE state = 'active' AND query LIKE 'ALTER TABLE%DETACH PARTITION%' AND query LIKE '%' || ? || '%'), 0) AS detach,
				coalesce((SELECT max(extract(epoch FROM clock_timestamp() - waitstart) * 1000) FROM pg_locks WHERE pid = ? AND NOT granted), 0) AS waited_ms`,
			fgPid, schema, fgPid).Scan(ctx, &s.blockers, &s.detach, &s.waitedMs)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	// The detach first: it waits for the holder (or, given CONCURRENTLY's steps, runs).
	deadline := time.Now().Add(time.Minute) // a bound on a hang
	// The server is sampled every 2 ms: a sampling rate, not a wait the test relies on.
	sample := time.NewTicker(2 * time.Millisecond)
	defer sample.Stop()
	var detachPid int64
	for detachPid == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the sweep's detach never showed in pg_stat_activity")
		}
		detachPid = look().detach
		<-sample.C
	}
	fgDone := make(chan error, 1)
	go func() {
		var n int
		fgDone <- fg.QueryRowContext(ctx, "SELECT count(*) FROM events WHERE at >= '2026-07-01'").Scan(&n)
	}()
	var samples, waited int
	var longest float64
	for done := false; !done; {
		select {
		case err := <-fgDone:
			if err != nil {
				t.Fatalf("the foreground query: %v", err)
			}
			done = true
			continue
		default:
		}
		s := look()
		samples++
		// The lock manager's word (pg_blocking_pids) decides whether it waits:
		// pg_stat_activity's wait state is read from another snapshot and may lag
		// by a moment as the wait ends.
		if s.blockers != "" {
			waited++
			longest = max(longest, s.waitedMs)
			if s.blockers != fmt.Sprint(detachPid) {
				t.Fatalf("the foreground waits for %v, not only for the sweep's detach (backend %d)", s.blockers, detachPid)
			}
			// The server's own measure of the wait (pg_locks.waitstart), with a second
			// of slack for a loaded server to fire the detach's timeout and let go.
			if s.waitedMs > float64((lockTimeout + time.Second).Milliseconds()) {
				t.Fatalf("the foreground has waited %.0f ms behind the detach, past its lock_timeout of %v", s.waitedMs, lockTimeout)
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the foreground query never finished")
		}
		<-sample.C
	}
	res := <-swept
	if res.err != nil {
		t.Fatal(res.err)
	}
	got := res.swept
	if out := got.outcomes(); len(out) != 1 || out[0] != "events_may contended" || !errors.Is(got.reports[0].Reason, driver.ErrPartitionContended) {
		t.Fatalf("the sweep reports %v, want events_may contended at its lock timeout", out)
	}
	switch {
	case !concurrently && waited == 0:
		t.Fatal("the foreground never queued behind the plain DETACH: the test did not exercise the wait")
	case concurrently && waited > 0:
		t.Fatalf("the foreground waited on a concurrent detach (%d of %d samples)", waited, samples)
	}
	t.Logf("concurrently=%v: %d samples, %d with the foreground waiting, longest wait pg_locks saw %.0f ms (lock_timeout %v)", concurrently, samples, waited, longest, lockTimeout)
}
