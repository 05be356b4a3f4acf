package actors_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/actors/actortest"
	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/dbtest"
)

// TestASweepWhoseLockIsHeldElsewhereEndsElsewhere runs a locked table pass while
// another session (another member, as far as PostgreSQL can tell) holds its lock: the
// sweep ends Elsewhere naming the holder, deletes nothing, is no failure and restarts
// nothing, and the pass tries again after ElsewhereRetry, doubling; once the lock is
// free the next sweep drains the table.
func TestASweepWhoseLockIsHeldElsewhereEndsElsewhere(t *testing.T) {
	db, other := dbtest.Postgres(t), dbtest.Postgres(t)
	ctx := context.Background()
	table := fmt.Sprintf("t%08x_events", rand.Uint32())
	if _, err := db.ExecContext(ctx, "CREATE TABLE "+table+" (id BIGINT PRIMARY KEY, at TIMESTAMPTZ NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = db.ExecContext(context.Background(), "DROP TABLE "+table) })
	if _, err := db.ExecContext(ctx, "INSERT INTO "+table+" SELECT g, '2001-01-01' FROM generate_series(1, 30) g"); err != nil {
		t.Fatal(err)
	}
	identity := table // unique to the test, so parallel packages never share the lock
	holder, err := passes.ExclusiveWith(other, passes.SweepLockOptions{Identity: identity, Conn: passes.SweepConnOptions{ApplicationName: "retention:other"}}, passes.Reuse(passes.PassFunc(nil)))
	if err != nil {
		t.Fatal(err)
	}
	held, err := holder(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := passes.NewTable(db, "events", passes.TableSpec{Table: table, Key: "id", Timestamp: "at"})
	if err != nil {
		t.Fatal(err)
	}
	if tbl, err = tbl.WithSweepLock(passes.SweepLockOptions{Identity: identity}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var bad []actors.Event
	done := make(chan actors.SweepDone, 8)
	clk := actortest.NewClock()
	rt := actors.New(actors.Config{Clock: clk, Logger: quietLogger(), ElsewhereRetry: 3 * time.Second, Observers: []actors.Observer{actors.ObserverFunc(func(e actors.Event) error {
		switch e := e.(type) {
		case actors.PassFailed, actors.PassRestarted, actors.BatchDone:
			if d, ok := e.(actors.BatchDone); ok && d.Rows > 0 {
				return nil // the last sweep's, once the lock is free
			}
			mu.Lock()
			bad = append(bad, e)
			mu.Unlock()
		case actors.SweepDone:
			done <- e
		}
		return nil
	})}})
	opts := passes.DefaultOptions()
	opts.RetentionPeriod, opts.SweepInterval, opts.MaxStartupStagger = passes.Retain(time.Hour), time.Hour, 24*time.Hour
	if err := rt.Register(tbl.Registration(opts)); err != nil {
		t.Fatal(err)
	}
	if err := rt.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rt.Stop(context.Background()) }()
	next := func() actors.SweepDone {
		t.Helper()
		if err := rt.Trigger("events"); err != nil {
			t.Fatal(err)
		}
		select {
		case d := <-done:
			return d
		case <-time.After(time.Minute): // a bound on a hang, not a timing assertion
			t.Fatal("the sweep did not end")
		}
		return actors.SweepDone{}
	}
	for i, wait := range []time.Duration{3 * time.Second, 6 * time.Second, 12 * time.Second} {
		d := next()
		var denied *passes.ElsewhereError
		if d.Reason != actors.Elsewhere || d.WorkRemains || d.Rows != 0 || d.Batches != 0 || !errors.As(d.Denied, &denied) {
			t.Fatalf("sweep %d: %+v; want it to end elsewhere with the denial", i+1, d)
		}
		if denied.Holder == nil || denied.Holder.Member != "other" {
			t.Fatalf("denial %v: want the holder, member other", d.Denied)
		}
		// The next try is scheduled just after SweepDone is published.
		waitUntil(t, func() bool { return passStatus(t, rt, "events").NextSweep.Equal(clk.Now().Add(wait)) })
		st := passStatus(t, rt, "events")
		if st.Failures != 0 || st.ConsecutiveFailures != 0 || st.LastSweepReason != actors.Elsewhere {
			t.Fatalf("after denial %d: status %+v; want no failure and the next try in %v", i+1, st, wait)
		}
	}
	if n := countRows(t, db, table); n != 30 {
		t.Fatalf("%d rows left after the denied sweeps, want 30", n)
	}
	if err := held.(passes.Closer).Close(); err != nil {
		t.Fatal(err)
	}
	if d := next(); d.Reason != actors.Drained || d.Rows != 30 {
		t.Fatalf("sweep once the lock is free: %+v", d)
	}
	waitUntil(t, func() bool { return passStatus(t, rt, "events").NextSweep.Equal(clk.Now().Add(time.Hour)) }) // the interval again
	mu.Lock()
	defer mu.Unlock()
	if len(bad) > 0 {
		t.Fatalf("events a denial must not cause: %v", bad)
	}
}

func passStatus(t *testing.T, rt *actors.Runtime, name string) actors.PassStatus {
	t.Helper()
	for _, p := range rt.Status().Passes {
		if p.Name == name {
			return p
		}
	}
	t.Fatalf("no pass %q", name)
	return actors.PassStatus{}
}

func countRows(t *testing.T, db *bun.DB, table string) int {
	t.Helper()
	var n int
	if err := db.QueryRowContext(context.Background(), "SELECT count(*) FROM "+table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
