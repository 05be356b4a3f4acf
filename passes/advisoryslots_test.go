package passes_test

import (
	"context"
	"errors"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/dbtest"
)

// openSlots opens members' slot pools on the test server under a name unique to the test.
func openSlots(t *testing.T, members int) []*passes.AdvisorySlots {
	t.Helper()
	slots, _ := openNamedSlots(t, members)
	return slots
}

// openNamedSlots is openSlots, with the name the slots are under.
func openNamedSlots(t *testing.T, members int) ([]*passes.AdvisorySlots, string) {
	t.Helper()
	return openSlotsOn(t, slotDatabases[0], members)
}

// slotDatabase is a database the slots run on: its driver's name and a DSN of the
// test's (a shared PostgreSQL database, where the slots' name is the test's own; a
// fresh MySQL one).
type slotDatabase struct {
	driver string
	dsn    func(t testing.TB) string
}

// slotDatabases are the databases with session locks. Each skips (or fails under CI)
// when its server is not there.
var slotDatabases = []slotDatabase{
	{passes.DriverPostgres, func(t testing.TB) string { dbtest.Postgres(t); return dbtest.PostgresURL() }},
	{passes.DriverMySQL, dbtest.MySQLDSN},
}

// onSlotDatabases runs f as a subtest per database with session locks.
func onSlotDatabases(t *testing.T, f func(t *testing.T, db slotDatabase)) {
	for _, db := range slotDatabases {
		t.Run(db.driver, func(t *testing.T) { f(t, db) })
	}
}

// openSlotsOn opens members' slot pools on db under a name unique to the test.
func openSlotsOn(t *testing.T, db slotDatabase, members int) ([]*passes.AdvisorySlots, string) {
	t.Helper()
	return openSlotsWith(t, db, members, passes.SweepConnOptions{})
}

// openSlotsWith is openSlotsOn with conn's settings (each member its own
// ApplicationName).
func openSlotsWith(t *testing.T, db slotDatabase, members int, conn passes.SweepConnOptions) ([]*passes.AdvisorySlots, string) {
	t.Helper()
	dsn := db.dsn(t)
	name := newFixturePrefix() + "db"
	var out []*passes.AdvisorySlots
	for i := range members {
		conn.ApplicationName = "retention:m" + string(rune('1'+i))
		s, err := passes.OpenAdvisorySlotsWith(context.Background(), db.driver, dsn, name, conn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		out = append(out, s)
	}
	return out, name
}

func waiting(t *testing.T, s *passes.AdvisorySlots) int {
	t.Helper()
	n, err := s.SlotsWaiting(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// Many requesters on three members (three pools) never hold more than the limit, as
// they count it and as the server's lock views show it, and leave nothing held or
// waiting, on every database with session locks.
func TestAdvisorySlotsNeverExceedTheLimit(t *testing.T) {
	onSlotDatabases(t, slotsNeverExceedTheLimit)
}

func slotsNeverExceedTheLimit(t *testing.T, db slotDatabase) {
	const capacity, perMember, rounds = 3, 4, 15
	members, _ := openSlotsOn(t, db, 3)
	ctx := bounded(t)
	var holding, peak atomic.Int32
	var sampled atomic.Int32
	stop := make(chan struct{})
	var sampler sync.WaitGroup
	sampler.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			n, err := members[0].SlotsInUse(ctx, capacity)
			if err != nil {
				t.Error(err)
				return
			}
			sampled.Store(max(sampled.Load(), int32(n)))
		}
	})
	var wg sync.WaitGroup
	for _, m := range members {
		for range perMember {
			wg.Go(func() {
				for range rounds {
					slot, err := m.AcquireSlot(ctx, capacity)
					if err != nil {
						t.Error(err)
						return
					}
					n := holding.Add(1)
					for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
					}
					for range 3 { // hold it for a few round trips, as a batch would
						_, _ = m.SlotsWaiting(ctx)
					}
					holding.Add(-1)
					if err := slot.Close(); err != nil {
						t.Error(err)
					}
				}
			})
		}
	}
	wg.Wait()
	close(stop)
	sampler.Wait()
	t.Logf("peak holders %d, peak in the server's locks %d, limit %d", peak.Load(), sampled.Load(), capacity)
	if peak.Load() > capacity || sampled.Load() > capacity {
		t.Fatalf("held %d at once (the server showed %d), limit %d", peak.Load(), sampled.Load(), capacity)
	}
	if peak.Load() < 2 {
		t.Fatalf("peak %d: the requesters never overlapped, so the test proved nothing", peak.Load())
	}
	if n, err := members[1].SlotsInUse(ctx, capacity); err != nil || n != 0 || waiting(t, members[2]) != 0 {
		t.Fatalf("after the run: %d in use (%v), %d waiting; want none", n, err, waiting(t, members[2]))
	}
}

// Requesters on several members are granted in the order they asked, not in the order
// they happen to poll, on every database with session locks.
func TestAdvisorySlotsGrantInArrivalOrder(t *testing.T) {
	onSlotDatabases(t, slotsGrantInArrivalOrder)
}

func slotsGrantInArrivalOrder(t *testing.T, db slotDatabase) {
	members, _ := openSlotsOn(t, db, 3)
	ctx := bounded(t)
	held, err := members[0].AcquireSlot(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var order []int
	var wg sync.WaitGroup
	const waiters = 6
	for i := range waiters {
		m := members[(i+1)%3]
		wg.Go(func() {
			slot, err := m.AcquireSlot(ctx, 1)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
			_ = slot.Close()
		})
		// The next asks only once this one is in line.
		waitFor(t, 30*time.Second, func() bool { return waiting(t, members[0]) == i+1 })
	}
	if err := held.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if want := []int{0, 1, 2, 3, 4, 5}; !slices.Equal(order, want) {
		t.Fatalf("granted in order %v, want %v", order, want)
	}
}

// A requester that gives up leaves the line holding nothing; a member whose connection
// dies gives its slot back.
func TestAdvisorySlotsComeBackFromAWaiterThatGaveUpAndAHolderThatDied(t *testing.T) {
	members, name := openNamedSlots(t, 2)
	ctx := bounded(t)
	held, err := members[0].AcquireSlot(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithCancel(ctx)
	gaveUp := make(chan error, 1)
	go func() {
		_, err := members[1].AcquireSlot(wctx, 1)
		gaveUp <- err
	}()
	waitFor(t, 30*time.Second, func() bool { return waiting(t, members[0]) == 1 })
	cancel()
	if err := <-gaveUp; !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled wait returned %v, want context.Canceled", err)
	}
	waitFor(t, 30*time.Second, func() bool { return waiting(t, members[0]) == 0 })

	// The holder's backend dies (as with a member killed): its slot comes back.
	var pid int
	if err := dbtest.Postgres(t).QueryRowContext(ctx, "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND classid::bigint = ? AND objid::bigint = ?",
		uint32(passes.SlotLockClass), uint32(passes.LockKey(name+"#slot0"))).Scan(&pid); err != nil {
		t.Fatal(err)
	}
	if _, err := dbtest.Postgres(t).ExecContext(ctx, "SELECT pg_terminate_backend(?)", pid); err != nil {
		t.Fatal(err)
	}
	got := make(chan io.Closer, 1)
	go func() {
		s, err := members[1].AcquireSlot(ctx, 1)
		if err != nil {
			t.Error(err)
		}
		got <- s
	}()
	select {
	case s := <-got:
		if s != nil {
			_ = s.Close()
		}
	case <-time.After(30 * time.Second): // a bound on a hang, not a timing assertion
		t.Fatal("the dead holder's slot did not come back")
	}
	_ = held.Close() // its connection is gone: an error, and nothing held
}

// A member paused at the head of the line (SIGSTOP between two polls) loses its place
// once its session has sat idle for HeadIdleTimeout: the server ends it, the queue lock
// goes with it and the next in line moves up, so one frozen member cannot stall every
// other member's deletes (the multi-process suite's SIGSTOP scenario saw the whole
// cluster stop for the freeze). A slot's holder, idle as long, keeps its slot: the
// timeout ends when the slot is taken. On every database with session locks.
func TestAdvisorySlotsAPausedHeadLosesItsPlace(t *testing.T) {
	onSlotDatabases(t, slotsPausedHeadLosesItsPlace)
}

func slotsPausedHeadLosesItsPlace(t *testing.T, db slotDatabase) {
	members, _ := openSlotsWith(t, db, 3, passes.SweepConnOptions{HeadIdleTimeout: time.Second})
	ctx := bounded(t)
	held, err := members[0].AcquireSlot(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	passes.PauseSlotPolls(members[1], time.Hour)
	pctx, unpause := context.WithCancel(ctx)
	paused := make(chan error, 1)
	go func() {
		slot, err := members[1].AcquireSlot(pctx, 1)
		if slot != nil {
			_ = slot.Close()
		}
		paused <- err
	}()
	waitFor(t, 30*time.Second, func() bool { return waiting(t, members[0]) == 1 })
	next := make(chan io.Closer, 1)
	go func() {
		slot, err := members[2].AcquireSlot(ctx, 1)
		if err != nil {
			t.Error(err)
		}
		next <- slot
	}()
	waitFor(t, 30*time.Second, func() bool { return waiting(t, members[0]) == 2 })
	// The paused head's session ends; the one behind it is now the head.
	waitFor(t, 30*time.Second, func() bool { return waiting(t, members[0]) == 1 })
	// Giving the slot back fails when the server ended the holder's session.
	if err := held.Close(); err != nil {
		t.Fatalf("the holder, idle longer than HeadIdleTimeout, lost its session and slot: %v", err)
	}
	select {
	case slot := <-next:
		if slot == nil {
			t.FailNow()
		}
		_ = slot.Close()
	case <-time.After(30 * time.Second): // a bound on a hang, not a timing assertion
		t.Fatal("the member behind the paused head got no slot")
	}
	unpause()
	if err := <-paused; err == nil {
		t.Fatal("the paused head took a slot after its session was ended")
	}
}

// A connection that waited at the head of the line and went back to the pool can wait
// in line again for as long as it takes, behind another member's head: nothing left from
// its last use (a setting, a lock) costs it its place or the slot.
func TestAdvisorySlotsAReusedConnectionWaitsInLineAsLongAsItTakes(t *testing.T) {
	members := openSlots(t, 3)
	ctx := bounded(t)
	acquire := func(s *passes.AdvisorySlots) chan io.Closer {
		got := make(chan io.Closer, 1)
		go func() {
			slot, err := s.AcquireSlot(ctx, 1)
			if err != nil {
				t.Error(err)
			}
			got <- slot
		}()
		return got
	}
	take := func(what string, got chan io.Closer) io.Closer {
		select {
		case s := <-got:
			if s == nil {
				t.FailNow()
			}
			return s
		case <-time.After(30 * time.Second): // a bound on a hang, not a timing assertion
			dumpLocks(t)
			t.Fatalf("no slot for %s", what)
			return nil
		}
	}
	waitedAtLeast := func(d time.Duration) {
		start := time.Now()
		waitFor(t, d+30*time.Second, func() bool { return time.Since(start) >= d })
	}
	held, err := members[0].AcquireSlot(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	first := acquire(members[1]) // at the head: waits on the slot in short rounds
	waitFor(t, 30*time.Second, func() bool { return waiting(t, members[0]) == 1 })
	waitedAtLeast(4 * passes.SlotPollMax)
	_ = held.Close()
	_ = take("first", first).Close() // its connection, short timeout set, goes back to members[1]'s pool

	actx, cancel := context.WithTimeout(ctx, 20*time.Second)
	held, err = members[0].AcquireSlot(actx, 1)
	cancel()
	if err != nil {
		dumpLocks(t)
		t.Fatal(err)
	}
	head := acquire(members[2])
	waitFor(t, 30*time.Second, func() bool { return waiting(t, members[0]) == 1 })
	second := acquire(members[1]) // reuses that connection, behind the head
	waitFor(t, 30*time.Second, func() bool { return waiting(t, members[0]) == 2 })
	waitedAtLeast(4 * passes.SlotPollMax)
	if n := waiting(t, members[0]); n != 2 {
		t.Fatalf("%d in line after the wait, want 2: the reused connection left the line", n)
	}
	_ = held.Close()
	_ = take("head", head).Close()
	_ = take("second", second).Close()
}

// bounded is a context that ends before the test's own timeout, so a wait for a slot that
// never comes fails the test instead of hanging it.
func bounded(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// dumpLocks logs every advisory lock on the server, for a failure to explain itself.
func dumpLocks(t *testing.T) {
	rows, err := dbtest.Postgres(t).QueryContext(context.Background(), "SELECT l.pid, l.classid::bigint, l.objid::bigint, l.granted, a.state, left(a.query, 100) FROM pg_locks l JOIN pg_stat_activity a USING (pid) WHERE l.locktype = 'advisory'")
	if err != nil {
		t.Log(err)
		return
	}
	defer rows.Close()
	for rows.Next() {
		var pid, class, obj int64
		var granted bool
		var state, query string
		_ = rows.Scan(&pid, &class, &obj, &granted, &state, &query)
		t.Logf("advisory lock: pid %d class %x key %d granted %v state %s query %s", pid, class, obj, granted, state, query)
	}
}
