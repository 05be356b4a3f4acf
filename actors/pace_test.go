package actors_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/core/pacing"
	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/dbtest"
)

// paceFixture is a table of expired rows and a gate table the probe counts, so a test
// can make the probe slow (fill the gate) and fast again (empty it).
type paceFixture struct {
	db          *bun.DB
	table, gate string
}

func newPaceFixture(t *testing.T, db *bun.DB, rows int) *paceFixture {
	t.Helper()
	ctx := context.Background()
	p := fmt.Sprintf("t%08x_", rand.Uint32())
	f := &paceFixture{db: db, table: p + "events", gate: p + "gate"}
	stmts := []string{
		"CREATE TABLE " + f.table + " (id BIGINT PRIMARY KEY, at BIGINT NOT NULL)",
		"CREATE INDEX " + f.table + "_at ON " + f.table + " (at, id)",
		"CREATE TABLE " + f.gate + " (id BIGINT NOT NULL)",
	}
	expired := time.Now().Add(-2 * time.Hour).Unix()
	// The rows double from one until a doubling would pass rows, then the rest come
	// from the first ones: a few set-based statements in plain SQL on every database,
	// fast at a million rows.
	stmts = append(stmts, fmt.Sprintf("INSERT INTO %s (id, at) VALUES (1, %d)", f.table, expired))
	have := 1
	for ; have*2 <= rows; have *= 2 {
		stmts = append(stmts, fmt.Sprintf("INSERT INTO %s (id, at) SELECT id + %d, at FROM %s", f.table, have, f.table))
	}
	if have < rows {
		stmts = append(stmts, fmt.Sprintf("INSERT INTO %s (id, at) SELECT id + %d, at FROM %s WHERE id <= %d", f.table, have, f.table, rows-have))
	}
	for _, s := range stmts {
		if _, err := db.ExecContext(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		_, _ = db.ExecContext(context.Background(), "DROP TABLE "+f.table)
		_, _ = db.ExecContext(context.Background(), "DROP TABLE "+f.gate)
	})
	return f
}

// paceEvents collects what an adaptive sweep published.
type paceEvents struct {
	mu      sync.Mutex
	changes []actors.PaceChanged
	sizes   map[int]int // batch rows -> batches
	done    []actors.SweepDone
	failed  []error
}

func (p *paceEvents) Observe(e actors.Event) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch e := e.(type) {
	case actors.PaceChanged:
		p.changes = append(p.changes, e)
	case actors.BatchDone:
		p.sizes[e.Rows]++
	case actors.SweepDone:
		p.done = append(p.done, e)
	case actors.PassFailed:
		p.failed = append(p.failed, e.Err)
	}
	return nil
}

// waitFor polls cond against a deadline.
func (p *paceEvents) waitFor(t *testing.T, what string, within time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		p.mu.Lock()
		ok, failed := cond(), p.failed
		p.mu.Unlock()
		if len(failed) > 0 {
			t.Fatalf("the pass failed: %v", failed)
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			p.mu.Lock()
			defer p.mu.Unlock()
			t.Fatalf("no %s within %v; changes %+v", what, within, p.changes)
		}
		<-time.After(20 * time.Millisecond)
	}
}

func (p *paceEvents) has(r pacing.Reason) bool {
	for _, c := range p.changes {
		if c.Reason == r {
			return true
		}
	}
	return false
}

// newTable is the fixture's table pass, probed by a count of the gate.
func (f *paceFixture) newTable(t *testing.T) *passes.Table {
	t.Helper()
	tbl, err := passes.NewTable(f.db, "events", passes.TableSpec{Table: f.table, Key: "id", Timestamp: "at",
		TimestampFormat: passes.TimestampUnixSeconds, ProbeQuery: "SELECT count(*) FROM " + f.gate})
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// startAdaptive runs f's table under adaptive pacing; commitProbe is Options.CommitProbe.
func startAdaptive(t *testing.T, f *paceFixture, ev *paceEvents, maxBatches int, commitProbe bool) *actors.Runtime {
	t.Helper()
	return startAdaptiveWith(t, f, ev, func(o *passes.Options) { o.MaxBatchesPerSweep, o.CommitProbe = maxBatches, commitProbe })
}

// startAdaptiveWith is startAdaptive with the options set changes.
func startAdaptiveWith(t *testing.T, f *paceFixture, ev *paceEvents, set func(*passes.Options)) *actors.Runtime {
	t.Helper()
	tbl := f.newTable(t)
	opts := passes.DefaultOptions()
	opts.RetentionPeriod, opts.MaxStartupStagger, opts.Pacing = passes.Retain(time.Hour), 0, passes.PacingAdaptive
	set(&opts)
	rt := actors.New(actors.Config{Logger: quietLogger(), Observers: []actors.Observer{ev}})
	if err := rt.Register(tbl.Registration(opts)); err != nil {
		t.Fatal(err)
	}
	if err := rt.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Stop(context.Background()) })
	return rt
}

// TestAdaptivePassLearnsABaselineAndSizesItsBatches drains a table under adaptive
// pacing on the wall clock: the first event is the learned baseline, the batches are
// sized by the controller (several sizes, none above BatchSize), the sweep's summary
// carries the pace, and every expired row is gone.
func TestAdaptivePassLearnsABaselineAndSizesItsBatches(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		// Each database drains a table of its own.
		t.Parallel()
		const rows = 5000 // several batch sizes on every database, under the race detector too
		f := newPaceFixture(t, db, rows)
		ev := &paceEvents{sizes: map[int]int{}}
		rt := startAdaptive(t, f, ev, passes.Unbounded, true)
		ev.waitFor(t, "end of the sweep", 2*time.Minute, func() bool { return len(ev.done) > 0 })
		ev.mu.Lock()
		defer ev.mu.Unlock()
		if len(ev.changes) == 0 || ev.changes[0].Reason != pacing.ReasonBaseline || ev.changes[0].Baseline <= 0 {
			t.Fatalf("changes %+v, want the learned baseline first", ev.changes)
		}
		full := 0
		for size, n := range ev.sizes {
			if size > passes.DefaultBatchSize {
				t.Errorf("a batch of %d rows, over the %d ceiling", size, passes.DefaultBatchSize)
			}
			if size > 0 && n > 0 {
				full++
			}
		}
		if full < 3 {
			t.Errorf("batch sizes %v: want the controller to have chosen several", ev.sizes)
		}
		d := ev.done[0]
		if d.Reason != actors.Drained || d.Rows != rows || d.Pace == nil || d.Pace.MaxBatch < d.Pace.MinBatch || d.Pace.Baseline <= 0 {
			t.Fatalf("sweep done %+v (pace %+v), want all %d rows drained with a pace summary", d, d.Pace, rows)
		}
		// With CommitProbe on, where the database has a commit probe, its baseline is
		// learned beside the probe's.
		if has, err := f.newTable(t).Signals().CommitProbe(context.Background()); err != nil {
			t.Fatalf("commit probe: %v", err)
		} else if has != (d.Pace.CommitBaseline > 0) {
			t.Errorf("commit probe %v, but the sweep's commit baseline is %v", has, d.Pace.CommitBaseline)
		}
		if line := actors.PaceLine(*d.Pace); line == "" {
			t.Error("empty pace line")
		}
		st := rt.Status().Passes[0]
		if st.Pace == nil || st.Pace.Pacing != passes.PacingAdaptive || st.Pace.Batch < 1 {
			t.Errorf("status pace %+v, want the adaptive pace", st.Pace)
		}
	})
}

// TestAdaptivePassBacksOffOnASlowProbeAndRecovers: once the baseline is learned over
// an empty gate, the gate is filled so the probe's count slows down by orders of
// magnitude; the pass backs off (PaceChanged, reason probe, a smaller rate), and
// recovers on its own once the gate is emptied.
func TestAdaptivePassBacksOffOnASlowProbeAndRecovers(t *testing.T) {
	t.Parallel()
	db := dbtest.Postgres(t)
	f := newPaceFixture(t, db, 1_000_000)
	ev := &paceEvents{sizes: map[int]int{}}
	rt := startAdaptive(t, f, ev, passes.Unbounded, false)
	ctx := context.Background()
	ev.waitFor(t, "baseline", 30*time.Second, func() bool { return ev.has(pacing.ReasonBaseline) })
	// A million rows: counting them takes tens of milliseconds even on a quiet machine,
	// far past a baseline learned on a loaded one (a CI run once learned a p75 of 12 ms
	// and a p99 of 50 ms, over which a count of 100,000 rows did not stand out).
	if _, err := db.ExecContext(ctx, "INSERT INTO "+f.gate+" SELECT g FROM generate_series(1, 1000000) g"); err != nil {
		t.Fatal(err)
	}
	ev.waitFor(t, "back-off on the slow probe", 30*time.Second, func() bool { return ev.has(pacing.ReasonProbe) })
	if _, err := db.ExecContext(ctx, "TRUNCATE "+f.gate); err != nil {
		t.Fatal(err)
	}
	ev.waitFor(t, "recovery", 30*time.Second, func() bool { return ev.has(pacing.ReasonRecovered) })
	ev.mu.Lock()
	var backoff, recovered actors.PaceChanged
	for _, c := range ev.changes {
		switch c.Reason {
		case pacing.ReasonProbe:
			backoff = c
		case pacing.ReasonRecovered:
			recovered = c
		}
	}
	ev.mu.Unlock()
	if backoff.Probe <= backoff.Baseline || backoff.Detail == "" {
		t.Errorf("back-off %+v: want the probe over the baseline, with the numbers", backoff)
	}
	if st := rt.Status().Passes[0].Pace; st == nil || st.Cuts == 0 || st.BackingOff <= 0 {
		t.Errorf("status pace %+v, want cuts and time spent backing off", st)
	} else if st.CommitBaseline != 0 || st.Commit != 0 {
		// PostgreSQL has a commit probe, but CommitProbe is off (the default): never run.
		t.Errorf("status pace %+v: the commit probe ran although the pass leaves it off", st)
	}
	if recovered.At.Before(backoff.At) {
		t.Errorf("recovered at %v before the back-off at %v", recovered.At, backoff.At)
	}
}

// TestAdaptivePassShowsTheBusySessions: a session of the same database sits inside a
// statement from before the sweep starts, so the busy sessions the controller learns
// as its baseline number at least one, and the pass's status and its metrics' source
// (PaceStatus) carry them. PostgreSQL, which counts them; the other tests' sessions on
// the shared test database can only add to the count.
func TestAdaptivePassShowsTheBusySessions(t *testing.T) {
	t.Parallel()
	db := dbtest.Postgres(t)
	f := newPaceFixture(t, db, 200_000)
	ctx, cancel := context.WithCancel(context.Background())
	sleeper, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	slept := make(chan error, 1)
	go func() { _, err := sleeper.ExecContext(ctx, "SELECT pg_sleep(120)"); slept <- err }()
	t.Cleanup(func() {
		// The server notices a client gone only when it writes to it: cancel the sleep
		// rather than leave it running into other tests' counts.
		_, _ = db.ExecContext(context.Background(), "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(120)'")
		cancel()
		<-slept
		_ = sleeper.Close()
	})
	ev := &paceEvents{sizes: map[int]int{}}
	ev.waitFor(t, "the sleeping session", 30*time.Second, func() bool {
		var n int
		err := db.QueryRowContext(context.Background(),
			"SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND query = 'SELECT pg_sleep(120)'").Scan(&n)
		return err == nil && n > 0
	})
	rt := startAdaptive(t, f, ev, passes.Unbounded, false)
	ev.waitFor(t, "baseline", 30*time.Second, func() bool { return ev.has(pacing.ReasonBaseline) })
	// Polled outside waitFor, which holds the events' lock that the runtime's
	// observer needs.
	deadline := time.Now().Add(30 * time.Second)
	for {
		st := rt.Status().Passes[0].Pace
		if st != nil && st.BusyBaseline >= 1 && st.Busy >= 1 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("status pace %+v, want a busy baseline and a busy p75 of at least one session", st)
		}
		<-time.After(20 * time.Millisecond)
	}
}

// TestAdaptivePassBacksOffOverMaxBusySessions: with max_busy_sessions 1 and two other
// sessions running a statement from before the pass starts (so its baseline learns them
// as usual), the pass backs off naming the limit.
func TestAdaptivePassBacksOffOverMaxBusySessions(t *testing.T) {
	t.Parallel()
	db := dbtest.Postgres(t)
	f := newPaceFixture(t, db, 200_000)
	ctx, cancel := context.WithCancel(context.Background())
	// A statement of this run's own, so sessions another run left sleeping (a server
	// notices a client gone only when it writes to it) are not counted as these.
	sleep := fmt.Sprintf("SELECT pg_sleep(120.%06d)", rand.IntN(1_000_000))
	var slept sync.WaitGroup
	for range 2 {
		sleeper, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		slept.Go(func() { _, _ = sleeper.ExecContext(ctx, sleep); _ = sleeper.Close() })
	}
	t.Cleanup(func() {
		_, _ = db.ExecContext(context.Background(), "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE query = ?", sleep)
		cancel()
		slept.Wait()
	})
	ev := &paceEvents{sizes: map[int]int{}}
	ev.waitFor(t, "the sleeping sessions", 30*time.Second, func() bool {
		var n int
		err := db.QueryRowContext(context.Background(),
			"SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND query = ?", sleep).Scan(&n)
		return err == nil && n == 2
	})
	startAdaptiveWith(t, f, ev, func(o *passes.Options) { o.MaxBusySessions = 1 })
	ev.waitFor(t, "a back-off over max_busy_sessions", time.Minute, func() bool {
		for _, c := range ev.changes {
			if c.Reason == pacing.ReasonLoad && strings.Contains(c.Detail, "over the limit of 1") {
				return true
			}
		}
		return false
	})
}

// TestSetPacingSwitchesAtTheNextSweep: a fixed pass switched to adaptive at run time
// sweeps adaptively next (a PaceChanged appears); an unknown mode or pass is refused.
func TestSetPacingSwitchesAtTheNextSweep(t *testing.T) {
	t.Parallel()
	db := dbtest.SQLite(t)
	f := newPaceFixture(t, db, 3000)
	ev := &paceEvents{sizes: map[int]int{}}
	tbl, err := passes.NewTable(db, "events", passes.TableSpec{Table: f.table, Key: "id", Timestamp: "at", TimestampFormat: passes.TimestampUnixSeconds})
	if err != nil {
		t.Fatal(err)
	}
	opts := passes.DefaultOptions()
	opts.RetentionPeriod, opts.MaxStartupStagger, opts.MaxBatchesPerSweep = passes.Retain(time.Hour), 0, 2
	rt := actors.New(actors.Config{Logger: quietLogger(), Observers: []actors.Observer{ev}})
	if err := rt.Register(tbl.Registration(opts)); err != nil {
		t.Fatal(err)
	}
	if err := rt.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer rt.Stop(context.Background())
	ev.waitFor(t, "the fixed sweep", time.Minute, func() bool { return len(ev.done) == 1 })
	ev.mu.Lock()
	first := ev.done[0]
	ev.mu.Unlock()
	if first.Pace != nil || first.Rows != 1000 {
		t.Fatalf("fixed sweep %+v, want 2 x 500 rows and no pace", first)
	}
	if err := rt.SetPacing("events", "fast"); err == nil {
		t.Error("pacing fast accepted")
	}
	if err := rt.SetPacing("nope", passes.PacingAdaptive); err == nil {
		t.Error("an unknown pass accepted")
	}
	if err := rt.SetPacing("events", passes.PacingAdaptive); err != nil {
		t.Fatal(err)
	}
	if got, _ := rt.Pacing("events"); got != passes.PacingAdaptive {
		t.Fatalf("pacing %q after the switch", got)
	}
	if err := rt.Trigger("events"); err != nil {
		t.Fatal(err)
	}
	ev.waitFor(t, "the adaptive sweep", time.Minute, func() bool { return len(ev.done) == 2 })
	ev.mu.Lock()
	defer ev.mu.Unlock()
	if d := ev.done[1]; d.Pace == nil || d.Reason != actors.BatchLimit || d.Rows < 1000 || !ev.has(pacing.ReasonBaseline) {
		t.Fatalf("adaptive sweep %+v (pace %+v), want the 1000-row bound reached under adaptive pacing", d, d.Pace)
	}
}
