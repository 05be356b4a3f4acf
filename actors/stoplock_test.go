package actors_test

import (
	"context"
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

// slowClosePass is a Go pass whose Close takes a while on the database (as a table
// pass's hygiene does after a big sweep), while the sweep lock of its exclusive wrapper
// is still held. full says whether each batch leaves more work.
type slowClosePass struct {
	db      *bun.DB
	full    bool
	batched chan struct{} // closed after the first batch
	closing chan struct{} // closed when Close starts
	once    sync.Once
	closeMu sync.Once
}

func (p *slowClosePass) PurgeBatch(_ context.Context, batchSize int, _ time.Time) (int, error) {
	p.once.Do(func() { close(p.batched) })
	if p.full {
		return batchSize, nil
	}
	return 0, nil
}

func (p *slowClosePass) Close() error {
	p.closeMu.Do(func() { close(p.closing) })
	_, err := p.db.ExecContext(context.Background(), "SELECT pg_sleep(1)")
	return err
}

// TestStopReturnsWithTheSweepLocksGivenBack stops a runtime whose locked pass is still
// closing its sweep (the close runs off the actor, on the pass's worker) and checks that
// Stop returns only once the sweep lock is free. A cluster member leaves after Stop; a
// lock still held then made the new owner's first try end `elsewhere`, and its next try
// came a sweep interval later (issue 27: SIGTERM handovers of 1.07-1.27 s). Two ways to
// get there: the stop ends a sweep between two batches, or it lands while the close of
// the sweep that just ended still runs.
func TestStopReturnsWithTheSweepLocksGivenBack(t *testing.T) {
	cases := []struct {
		name string
		full bool // batches leave work: the stop lands mid-sweep, between batches
	}{
		{name: "stopped between two batches", full: true},
		{name: "the last sweep still closing", full: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			db, probe := dbtest.Postgres(t), dbtest.Postgres(t)
			ctx := context.Background()
			identity := fmt.Sprintf("stoplock-%08x", rand.Uint32()) // unique, so parallel packages never share the lock
			p := &slowClosePass{db: db, full: tc.full, batched: make(chan struct{}), closing: make(chan struct{})}
			factory, err := passes.ExclusiveWith(db, passes.SweepLockOptions{Identity: identity}, passes.Reuse(p))
			if err != nil {
				t.Fatal(err)
			}
			rt := actors.New(actors.Config{Clock: actortest.NewClock(), Logger: quietLogger()})
			opts := passes.DefaultOptions()
			opts.RetentionPeriod, opts.SweepInterval, opts.MaxStartupStagger = passes.Retain(time.Hour), time.Hour, 24*time.Hour
			opts.BatchDelay = time.Hour // on the manual clock: the sweep waits between its batches until stopped
			if err := rt.Register(passes.Registration{Name: "p", New: factory, Options: opts}); err != nil {
				t.Fatal(err)
			}
			if err := rt.Start(ctx); err != nil {
				t.Fatal(err)
			}
			stopped := false
			defer func() {
				if !stopped {
					_ = rt.Stop(context.Background())
				}
			}()
			if err := rt.Trigger("p"); err != nil {
				t.Fatal(err)
			}
			reached := p.batched
			if !tc.full {
				reached = p.closing
			}
			select {
			case <-reached:
			case <-time.After(time.Minute): // a bound on a hang, not a timing assertion
				t.Fatal("the sweep never got to the point of the stop")
			}
			stopCtx, cancel := context.WithTimeout(ctx, time.Minute)
			defer cancel()
			if err := rt.Stop(stopCtx); err != nil {
				t.Fatal(err)
			}
			stopped = true
			select {
			case <-p.closing:
			default:
				t.Fatal("Stop returned before the sweep's pass was closed")
			}
			conn, err := probe.Conn(ctx) // one session: the lock it may take is given back on it
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			var free bool
			if err := conn.QueryRowContext(ctx, "SELECT pg_try_advisory_lock(?::int4, ?::int4)", passes.SweepLockClass, passes.LockKey(identity)).Scan(&free); err != nil {
				t.Fatal(err)
			}
			if !free {
				t.Fatalf("the sweep lock of %q is still held when Stop has returned: a member leaving now would deny its new owner's first try", identity)
			}
			if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_unlock_all()"); err != nil {
				t.Fatal(err)
			}
		})
	}
}
