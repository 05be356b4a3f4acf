package actors_test

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/dbtest"
)

// slotMembers opens n members' advisory slots under one name unique to the test.
func slotMembers(t *testing.T, n int) []*passes.AdvisorySlots {
	t.Helper()
	dbtest.Postgres(t) // skips (or fails under CI) when the server is unreachable
	name := fmt.Sprintf("t%08x_db", rand.Uint32())
	var out []*passes.AdvisorySlots
	for i := range n {
		s, err := passes.OpenAdvisorySlots(context.Background(), dbtest.PostgresURL(), name, passes.SweepConnOptions{ApplicationName: fmt.Sprintf("retention:m%d", i+1)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		out = append(out, s)
	}
	return out
}

// requester is a stand-in pass actor: it records what a pool tells it.
type requester struct{ heard chan any }

func (r *requester) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actors.SlotGranted, *actors.YieldSlot:
		r.heard <- m
	}
}

func spawnRequester(t *testing.T, sys *actor.ActorSystem) (*actor.PID, chan any) {
	heard := make(chan any, 16)
	return sys.Root.Spawn(actor.PropsFromProducer(func() actor.Actor { return &requester{heard: heard} })), heard
}

// hear returns the next message a requester heard, failing past a generous bound.
func hear(t *testing.T, heard chan any) any {
	t.Helper()
	select {
	case m := <-heard:
		return m
	case <-time.After(30 * time.Second): // a bound on a hang, not a timing assertion
		t.Fatal("the requester heard nothing")
		return nil
	}
}

// hearWant waits for want, passing over requests to yield that came earlier (a yield for
// a request already released is harmless); anything else fails the test.
func hearWant(t *testing.T, heard chan any, want any, what string) {
	t.Helper()
	for {
		m := hear(t, heard)
		if reflect.DeepEqual(m, want) {
			return
		}
		if _, ok := m.(*actors.YieldSlot); !ok {
			t.Fatalf("%s: heard %#v, want %#v", what, m, want)
		}
	}
}

func silent(t *testing.T, heard chan any, what string) {
	t.Helper()
	select {
	case m := <-heard:
		t.Fatalf("%s: heard %#v", what, m)
	default:
	}
}

func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 30s")
		}
		<-tick.C
	}
}

// The advisory pool keeps the slot protocol with real PostgreSQL behind it: grants in
// arrival order, asks a holder to yield when someone here waits, gives a stopped
// requester's slot to the next, drops a request given up before its grant, and asks a
// holder to yield when a requester of another member waits.
func TestAdvisorySlotPoolKeepsTheProtocol(t *testing.T) {
	members := slotMembers(t, 2)
	sys := quietSystem()
	t.Cleanup(sys.Shutdown)
	ctx := context.Background()
	inUse := func() int {
		n, err := members[0].SlotsInUse(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	pool := actors.NewAdvisorySlotPoolWith(members[0], 1, actors.AdvisorySlotPoolOptions{WaiterPoll: 5 * time.Millisecond})
	pid := spawnPool(t, sys, pool)
	a, aHeard := spawnRequester(t, sys)
	b, bHeard := spawnRequester(t, sys)
	c, cHeard := spawnRequester(t, sys)

	sys.Root.Send(pid, &actors.AcquireSlot{Req: 1, From: a})
	hearWant(t, aHeard, &actors.SlotGranted{Req: 1}, "a: its grant")
	if st := pool.Status(); st.InUse != 1 || st.Capacity != 1 || inUse() != 1 {
		t.Fatalf("status %+v, %d in pg_locks; want 1 of 1", st, inUse())
	}
	sys.Root.Send(pid, &actors.AcquireSlot{Req: 7, From: b})
	hearWant(t, aHeard, &actors.YieldSlot{Req: 1}, "a: to yield: b waits")
	sys.Root.Send(pid, &actors.AcquireSlot{Req: 3, From: c})
	waitUntil(t, func() bool { n, _ := members[0].SlotsWaiting(ctx); return n == 1 }) // b at the source, c in the pool's line

	// a stops without releasing: the pool watched it, so b gets the slot.
	sys.Root.Stop(a)
	hearWant(t, bHeard, &actors.SlotGranted{Req: 7}, "b: its grant after a stopped")
	// c gives up while it waits; b releases: nobody holds anything, c is told nothing.
	sys.Root.Send(pid, &actors.ReleaseSlot{Req: 3, From: c})
	sys.Root.Send(pid, &actors.ReleaseSlot{Req: 7, From: b})
	sys.Root.Send(pid, &actors.ReleaseSlot{Req: 7, From: b}) // a second release is a no-op
	waitUntil(t, func() bool { return inUse() == 0 && pool.Status().InUse == 0 })
	silent(t, cHeard, "c gave up")

	// Another member's requester waits: this member's holder is asked to yield.
	sys.Root.Send(pid, &actors.AcquireSlot{Req: 9, From: b})
	hearWant(t, bHeard, &actors.SlotGranted{Req: 9}, "b: its grant")
	other := actors.NewAdvisorySlotPool(members[1], 1)
	opid := spawnPool(t, sys, other)
	d, dHeard := spawnRequester(t, sys)
	sys.Root.Send(opid, &actors.AcquireSlot{Req: 1, From: d})
	hearWant(t, bHeard, &actors.YieldSlot{Req: 9}, "b: to yield: a requester of another member waits")
	silent(t, dHeard, "d while b holds the only slot")
	sys.Root.Send(pid, &actors.ReleaseSlot{Req: 9, From: b})
	hearWant(t, dHeard, &actors.SlotGranted{Req: 1}, "d: its grant once b released")
	_ = sys.Root.StopFuture(opid).Wait()
	waitUntil(t, func() bool { return inUse() == 0 }) // the pool gives its slots back when it stops
}

// Requests of one member are granted in the order they arrived.
func TestAdvisorySlotPoolGrantsInArrivalOrder(t *testing.T) {
	members := slotMembers(t, 1)
	sys := quietSystem()
	t.Cleanup(sys.Shutdown)
	pid := spawnPool(t, sys, actors.NewAdvisorySlotPool(members[0], 1))
	heard := make(chan any, 64)
	var order []int
	var mu sync.Mutex
	var reqs []*actor.PID
	for i := range 6 {
		i := i
		reqs = append(reqs, sys.Root.Spawn(actor.PropsFromFunc(func(ctx actor.Context) {
			if m, ok := ctx.Message().(*actors.SlotGranted); ok {
				mu.Lock()
				order = append(order, i)
				mu.Unlock()
				ctx.Send(pid, &actors.ReleaseSlot{Req: m.Req, From: ctx.Self()})
				heard <- m
			}
		})))
	}
	for i, r := range reqs {
		sys.Root.Send(pid, &actors.AcquireSlot{Req: uint64(i + 1), From: r})
	}
	for range reqs {
		hear(t, heard)
	}
	mu.Lock()
	defer mu.Unlock()
	for i, got := range order {
		if got != i {
			t.Fatalf("granted in order %v, want 0..5", order)
		}
	}
}

// Two runtimes (two members) sweep real table passes with the advisory pool as their
// slot pools: no more batches run at once across both than the cluster-wide limit, as
// the batches count it and as pg_locks shows it, and exactly the expired rows go.
func TestRuntimesShareTheClusterWideLimit(t *testing.T) {
	const capacity, tables, rows = 2, 6, 600
	db := dbtest.Postgres(t)
	ctx := context.Background()
	members := slotMembers(t, 2)
	var names []string
	for i := range tables {
		name := fmt.Sprintf("t%08x_ev%d", rand.Uint32(), i)
		if _, err := db.ExecContext(ctx, "CREATE TABLE "+name+" (id BIGINT PRIMARY KEY, at TIMESTAMPTZ NOT NULL)"); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _, _ = db.ExecContext(context.Background(), "DROP TABLE "+name) })
		// Every tenth row is recent and stays.
		if _, err := db.ExecContext(ctx, "INSERT INTO "+name+" SELECT g, CASE WHEN g % 10 = 0 THEN now() + interval '1 day' ELSE '2001-01-01' END FROM generate_series(1, ?) g", rows); err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	var running, peak atomic.Int32
	counted := func(f passes.Factory) passes.Factory {
		return func(ctx context.Context) (passes.Pass, error) {
			p, err := f(ctx)
			if err != nil {
				return nil, err
			}
			return &countingPass{inner: p, running: &running, peak: &peak}, nil
		}
	}
	var mu sync.Mutex
	var failures []error
	done := make(chan actors.SweepDone, 4*tables)
	for m := range members {
		pool := actors.NewAdvisorySlotPool(members[m], capacity)
		rt := actors.New(actors.Config{Logger: quietLogger(), SlotPools: func(string, int) actors.AdmissionPool { return pool },
			Observers: []actors.Observer{actors.ObserverFunc(func(e actors.Event) error {
				switch e := e.(type) {
				case actors.PassFailed:
					mu.Lock()
					failures = append(failures, e.Err)
					mu.Unlock()
				case actors.SweepDone:
					done <- e
				}
				return nil
			})}})
		// Each member sweeps its half of the tables.
		for i := m; i < tables; i += len(members) {
			tbl, err := passes.NewTable(db, fmt.Sprintf("ev%d", i), passes.TableSpec{Table: names[i], Key: "id", Timestamp: "at"})
			if err != nil {
				t.Fatal(err)
			}
			opts := passes.DefaultOptions()
			opts.RetentionPeriod, opts.BatchSize, opts.MaxStartupStagger, opts.MaxBatchesPerSweep = passes.Retain(time.Hour), 20, 0, 1000
			reg := tbl.Registration(opts)
			reg.New = counted(reg.New)
			if err := rt.Register(reg); err != nil {
				t.Fatal(err)
			}
		}
		if err := rt.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = rt.Stop(context.Background()) })
	}
	var sampled, samples atomic.Int32
	stop := make(chan struct{})
	var sampler sync.WaitGroup
	sampler.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if n, err := members[0].SlotsInUse(ctx, capacity); err == nil {
				samples.Add(1)
				sampled.Store(max(sampled.Load(), int32(n)))
			}
		}
	})
	for range tables {
		select {
		case d := <-done:
			if d.Reason != actors.Drained {
				t.Errorf("%s ended %s", d.Name, d.Reason)
			}
		case <-time.After(2 * time.Minute): // a bound on a hang, not a timing assertion
			t.Fatal("the sweeps did not finish")
		}
	}
	close(stop)
	sampler.Wait()
	t.Logf("peak batches at once %d, peak slots in pg_locks %d (%d samples), limit %d", peak.Load(), sampled.Load(), samples.Load(), capacity)
	if peak.Load() > capacity || sampled.Load() > capacity {
		t.Fatalf("%d batches at once (pg_locks showed %d slots), limit %d", peak.Load(), sampled.Load(), capacity)
	}
	if peak.Load() < 2 || sampled.Load() < 1 {
		t.Fatalf("peak %d, sampled %d: the members never overlapped, so the test proved nothing", peak.Load(), sampled.Load())
	}
	mu.Lock()
	defer mu.Unlock()
	if len(failures) > 0 {
		t.Fatalf("failures: %v", failures)
	}
	for _, name := range names {
		if n := countRows(t, db, name); n != rows/10 {
			t.Errorf("%s: %d rows left, want %d", name, n, rows/10)
		}
	}
}

// countingPass counts the batches running at once across every pass that shares its
// counters.
type countingPass struct {
	inner         passes.Pass
	running, peak *atomic.Int32
}

func (p *countingPass) PurgeBatch(ctx context.Context, size int, olderThan time.Time) (int, error) {
	n := p.running.Add(1)
	for old := p.peak.Load(); n > old && !p.peak.CompareAndSwap(old, n); old = p.peak.Load() {
	}
	defer p.running.Add(-1)
	return p.inner.PurgeBatch(ctx, size, olderThan)
}

func (p *countingPass) Close() error {
	if c, ok := p.inner.(passes.Closer); ok {
		return c.Close()
	}
	return nil
}

// spawnPool spawns a pool's actor, stopped when the test ends (before its slots close,
// so a wait still in line is cancelled rather than left to hang the close).
func spawnPool(t *testing.T, sys *actor.ActorSystem, pool actors.AdmissionPool) *actor.PID {
	pid := sys.Root.Spawn(pool.Props())
	t.Cleanup(func() { _ = sys.Root.StopFuture(pid).Wait() })
	return pid
}

func quietSystem() *actor.ActorSystem {
	return actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger { return slog.New(slog.DiscardHandler) }))
}
