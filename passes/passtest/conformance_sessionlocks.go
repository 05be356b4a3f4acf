package passtest

import (
	"context"
	sqldriver "database/sql/driver"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/driver"
)

// sessionLockBehaviours state the contract of the driver's Locks and LockViews once,
// for every database that has session locks: the sweep lock and the cluster's delete
// slots stand on it (passes/sweeplock.go, passes/advisoryslots.go), and neither knows
// which database it runs on. A lock is taken without waiting or waited for in the
// order the waiters asked, held by its session, nested when taken twice, dropped with
// the connection, and shown to any session of the database with its holder. A
// database without session locks refuses every one of them.
func sessionLockBehaviours() []behaviour {
	held := needsSessionLocks
	return []behaviour{
		{name: "a try-lock is denied to a second session and nests in its holder", run: tryLockDeniedAndNested, skip: held},
		{name: "a lock is freed when the connection holding it is closed", run: lockFreedWithConnection, skip: held},
		{name: "waiters are served in the order they asked", run: waitersInOrder, skip: held},
		{name: "a wait ended by CancelStatement holds nothing and leaves the line", run: cancelledWaitLeaves, skip: held},
		{name: "the head takes the first free slot and leaves the line in one statement", run: tryFirstTakesOneAndLeaves, skip: held},
		{name: "lock views name the holder and count the line", onTarget: lockViewsNameHolder, skip: held},
		{name: "a session idle past its idle timeout is ended, and one whose timeout was put back is not", run: idleTimeoutEndsSession, skip: held},
		{name: "every lock method refuses where the database has no session locks", run: sessionLocksRefused, skip: needsNoSessionLocks},
	}
}

// lockTimeout bounds how long a behaviour waits for the server to do what it must do
// at once (grant a freed lock, show a waiter): long enough for a loaded machine.
const lockTimeout = 20 * time.Second

// lockKeys returns n keys of the behaviour's own: locks are the database's (on
// PostgreSQL every test schema shares them), so behaviours running at once must not
// share a key.
func lockKeys(n int) []int32 {
	keys := make([]int32, n)
	for i := range keys {
		keys[i] = rand.Int32()
	}
	return keys
}

// lockConn is one connection of a pool, the way pinSweep and AcquireSlot hold one.
type lockConn struct {
	bun.Conn
	backend int
}

// conn takes a connection from db, reads its backend id and gives it back (closed,
// not pooled, so nothing it holds outlives the test) when the test ends.
func conn(t *testing.T, d driver.Driver, db *bun.DB) *lockConn {
	t.Helper()
	ctx := context.Background()
	c, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeConn(c) })
	id, err := d.ApplyLockSession(ctx, c, driver.LockSession{WaitUnbounded: true})
	if err != nil {
		t.Fatalf("ApplyLockSession: %v", err)
	}
	return &lockConn{Conn: c, backend: id}
}

// closeConn closes c's connection itself rather than pooling it, as a member that dies
// closes its sockets.
func closeConn(c bun.Conn) {
	_ = c.Raw(func(any) error { return sqldriver.ErrBadConn })
	_ = c.Close()
}

// lockDriver is db's driver, as passes finds it.
func lockDriver(t *testing.T, db bun.IDB) driver.Driver {
	t.Helper()
	d, err := passes.DriverFor(db)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// try takes (class, key) on c without waiting and fails the test on an error.
func try(t *testing.T, d driver.Driver, c *lockConn, class, key int32) bool {
	t.Helper()
	_, granted, err := d.TrySessionLock(context.Background(), c, driver.LockSession{}, class, key)
	if err != nil {
		t.Fatalf("TrySessionLock(%d, %d): %v", class, key, err)
	}
	return granted
}

// release gives (class, key) back on c and says whether c held it.
func release(t *testing.T, d driver.Driver, c *lockConn, class, key int32) bool {
	t.Helper()
	released, err := d.ReleaseSessionLock(context.Background(), c, class, key)
	if err != nil {
		t.Fatalf("ReleaseSessionLock(%d, %d): %v", class, key, err)
	}
	return released
}

// until polls cond until it holds, failing the test with what past lockTimeout: the
// server frees and shows locks on its own time, not the test's.
func until(t *testing.T, what string, cond func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(lockTimeout)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, err := cond()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, lockTimeout)
		}
		<-tick.C
	}
}

// lineIs waits until lock (class, key) has n sessions holding or waiting.
func lineIs(t *testing.T, d driver.Driver, db bun.IDB, class, key int32, n int) {
	t.Helper()
	until(t, fmt.Sprintf("%d sessions in the line of lock %d", n, key), func() (bool, error) {
		got, err := d.LockLine(context.Background(), db, class, key)
		return got == n, err
	})
}

// tryLockDeniedAndNested: a lock one session holds is denied to another, without
// waiting; the holder's second take nests, so it holds the lock until it gives back as
// many as it took; a release by a session that does not hold it is false and changes
// nothing.
func tryLockDeniedAndNested(t *testing.T, db *DB) {
	d := lockDriver(t, db.DB)
	other := db.Reopen(t)
	key := lockKeys(1)[0]
	a, b := conn(t, d, db.DB), conn(t, d, other)
	for take := range 2 { // the second take nests
		if !try(t, d, a, passes.SweepLockClass, key) {
			t.Fatalf("take %d: the first session was denied a free lock, or its own lock", take+1)
		}
	}
	if try(t, d, b, passes.SweepLockClass, key) {
		t.Fatal("a second session was granted a held lock")
	}
	if release(t, d, b, passes.SweepLockClass, key) {
		t.Fatal("a session released a lock it does not hold")
	}
	if try(t, d, b, passes.SweepLockClass, key) || !try(t, d, b, passes.SlotLockClass, key) {
		t.Fatal("the other session's release changed the lock, or one class's lock blocked another's")
	}
	if !release(t, d, a, passes.SweepLockClass, key) || try(t, d, b, passes.SweepLockClass, key) {
		t.Fatal("a lock taken twice was free after one release")
	}
	if !release(t, d, a, passes.SweepLockClass, key) || !try(t, d, b, passes.SweepLockClass, key) {
		t.Fatal("a lock given back as often as it was taken is not free")
	}
	if release(t, d, a, passes.SweepLockClass, key) {
		t.Fatal("a session released a lock it no longer holds")
	}
}

// lockFreedWithConnection: closing the connection that holds a lock (as a member that
// dies closes its sockets) frees it for another session, with no release.
func lockFreedWithConnection(t *testing.T, db *DB) {
	d := lockDriver(t, db.DB)
	other := db.Reopen(t)
	key := lockKeys(1)[0]
	a, b := conn(t, d, db.DB), conn(t, d, other)
	if !try(t, d, a, passes.SweepLockClass, key) || try(t, d, b, passes.SweepLockClass, key) {
		t.Fatal("the lock was not exclusive to its first session")
	}
	closeConn(a.Conn)
	until(t, "the lock of a closed connection taken by another session", func() (bool, error) {
		_, granted, err := d.TrySessionLock(context.Background(), b, driver.LockSession{}, passes.SweepLockClass, key)
		return granted, err
	})
	if held, err := d.LocksHeld(context.Background(), db.DB, passes.SweepLockClass, []int32{key}); err != nil || held != 1 {
		t.Fatalf("LocksHeld: %d, %v; want 1 (the new holder's)", held, err)
	}
}

// idleTimeoutEndsSession: a session given an idle timeout that then sits idle past it
// is ended by the server, its locks with it; a session whose timeout was set and put
// back (SetIdleTimeout 0), idle as long, keeps its lock. The head of the slots' line
// stands on the first (a paused member loses its place), a slot's holder on the second.
func idleTimeoutEndsSession(t *testing.T, db *DB) {
	ctx := context.Background()
	d := lockDriver(t, db.DB)
	keys := lockKeys(2)
	kept, ended := conn(t, d, db.DB), conn(t, d, db.Reopen(t))
	for _, step := range []struct {
		c *lockConn
		d time.Duration
	}{{kept, time.Second}, {kept, 0}, {ended, time.Second}} {
		if err := d.SetIdleTimeout(ctx, step.c, step.d); err != nil {
			t.Fatalf("SetIdleTimeout(%v): %v", step.d, err)
		}
	}
	if !try(t, d, kept, passes.SweepLockClass, keys[0]) || !try(t, d, ended, passes.SweepLockClass, keys[1]) {
		t.Fatal("a free lock was denied")
	}
	until(t, "the lock of a session idle past its timeout freed", func() (bool, error) {
		held, err := d.LocksHeld(ctx, db.DB, passes.SweepLockClass, keys[1:])
		return held == 0, err
	})
	if held, err := d.LocksHeld(ctx, db.DB, passes.SweepLockClass, keys[:1]); err != nil || held != 1 {
		t.Fatalf("LocksHeld of the session whose timeout was put back: %d, %v; want 1", held, err)
	}
	if !release(t, d, kept, passes.SweepLockClass, keys[0]) {
		t.Fatal("the session whose timeout was put back no longer held its lock")
	}
}

// waitersInOrder: sessions that wait for a held lock get it in the order they asked,
// each once the one before gives it back. This is what makes the delete slots' line
// fair: a member that asked first is served first. Each waiter joins only once the one
// before is seen in line, so "asked first" is well defined.
func waitersInOrder(t *testing.T, db *DB) {
	const waiters = 5
	d := lockDriver(t, db.DB)
	other := db.Reopen(t)
	key := lockKeys(1)[0]
	holder := conn(t, d, db.DB)
	if !try(t, d, holder, passes.QueueLockClass, key) {
		t.Fatal("the first session was denied a free lock")
	}
	var (
		mu     sync.Mutex
		served []int
		wg     sync.WaitGroup
		errs   = make(chan error, waiters)
	)
	for i := range waiters {
		w := conn(t, d, other)
		wg.Go(func() {
			ctx := context.Background()
			if err := d.WaitSessionLock(ctx, w, passes.QueueLockClass, key); err != nil {
				errs <- fmt.Errorf("waiter %d: %w", i, err)
				return
			}
			mu.Lock()
			served = append(served, i)
			mu.Unlock()
			if ok, err := d.ReleaseSessionLock(ctx, w, passes.QueueLockClass, key); err != nil || !ok {
				errs <- fmt.Errorf("waiter %d gives back: %v, %v", i, ok, err)
			}
		})
		lineIs(t, d, db.DB, passes.QueueLockClass, key, i+2)
	}
	if !release(t, d, holder, passes.QueueLockClass, key) {
		t.Fatal("the holder did not hold the lock")
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if want := []int{0, 1, 2, 3, 4}; !slices.Equal(served, want) {
		t.Fatalf("waiters served in the order %v; want the order they asked, %v", served, want)
	}
}

// cancelledWaitLeaves: a wait the caller ends with CancelStatement (the client may not
// interrupt it by itself) returns an error, holds nothing, and leaves the line.
func cancelledWaitLeaves(t *testing.T, db *DB) {
	d := lockDriver(t, db.DB)
	other := db.Reopen(t)
	key := lockKeys(1)[0]
	holder, waiter := conn(t, d, db.DB), conn(t, d, other)
	if !try(t, d, holder, passes.QueueLockClass, key) {
		t.Fatal("the first session was denied a free lock")
	}
	done := make(chan error, 1)
	go func() { done <- d.WaitSessionLock(context.Background(), waiter, passes.QueueLockClass, key) }()
	lineIs(t, d, db.DB, passes.QueueLockClass, key, 2)
	if err := d.CancelStatement(context.Background(), db.DB, waiter.backend); err != nil {
		t.Fatalf("CancelStatement: %v", err)
	}
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a cancelled wait returned no error")
		}
	case <-time.After(lockTimeout):
		t.Fatal("a cancelled wait did not end")
	}
	lineIs(t, d, db.DB, passes.QueueLockClass, key, 1)
	if !release(t, d, holder, passes.QueueLockClass, key) {
		t.Fatal("the holder lost the lock")
	}
	// The waiter's connection may be unusable after the cancel (the caller discards it):
	// the server's view says whether it took the lock.
	if held, err := d.LocksHeld(context.Background(), db.DB, passes.QueueLockClass, []int32{key}); err != nil || held != 0 {
		t.Fatalf("LocksHeld after the holder gave back: %d, %v; want 0 (the cancelled waiter holds nothing)", held, err)
	}
}

// tryFirstTakesOneAndLeaves: the head of the slots' line, holding the line's lock,
// takes the first free slot and no other, and gives the line's lock back in the same
// statement; with every slot taken it takes nothing and keeps its place.
func tryFirstTakesOneAndLeaves(t *testing.T, db *DB) {
	ctx := context.Background()
	d := lockDriver(t, db.DB)
	other := db.Reopen(t)
	keys := lockKeys(4)
	slots, queue := keys[:3], keys[3]
	head, busy := conn(t, d, db.DB), conn(t, d, other)
	if !try(t, d, busy, passes.SlotLockClass, slots[0]) || !try(t, d, head, passes.QueueLockClass, queue) {
		t.Fatal("a free lock was denied")
	}
	slot, left, err := d.TryFirstSessionLock(ctx, head, passes.SlotLockClass, slots, passes.QueueLockClass, queue)
	if err != nil || slot != 1 || !left {
		t.Fatalf("TryFirstSessionLock: slot %d, left %v, %v; want slot 1 (slot 0 is taken), the line left", slot, left, err)
	}
	if n, err := d.LocksHeld(ctx, db.DB, passes.SlotLockClass, slots); err != nil || n != 2 {
		t.Fatalf("slots held: %d, %v; want 2 (slot 2 untouched)", n, err)
	}
	if n, err := d.LockLine(ctx, db.DB, passes.QueueLockClass, queue); err != nil || n != 0 {
		t.Fatalf("the line: %d, %v; want 0", n, err)
	}
	// Every slot taken: nothing is taken, and the line's lock stays with the head.
	if !try(t, d, busy, passes.SlotLockClass, slots[2]) || !try(t, d, head, passes.QueueLockClass, queue) {
		t.Fatal("a free lock was denied")
	}
	slot, left, err = d.TryFirstSessionLock(ctx, head, passes.SlotLockClass, slots[:1:1], passes.QueueLockClass, queue)
	if err != nil || slot != -1 || left {
		t.Fatalf("TryFirstSessionLock with every slot taken: slot %d, left %v, %v; want -1, nothing given back", slot, left, err)
	}
	if !release(t, d, head, passes.QueueLockClass, queue) || !release(t, d, head, passes.SlotLockClass, slots[1]) {
		t.Fatal("the head lost the line's lock, or its slot")
	}
}

// lockViewsNameHolder: any session of the database reads who holds a lock (its backend
// id and, where the server keeps one, its application name), counts the locks held
// among a set of keys, and counts a lock's line: its holder and its waiters.
func lockViewsNameHolder(t *testing.T, target Target) {
	ctx := context.Background()
	db := target.Open(t)
	d := lockDriver(t, db.DB)
	other := db.Reopen(t)
	keys := lockKeys(3)
	c, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeConn(c) })
	backend, granted, err := d.TrySessionLock(ctx, c, driver.LockSession{ApplicationName: passes.MemberAppPrefix + "m1"}, passes.SweepLockClass, keys[0])
	if err != nil || !granted {
		t.Fatalf("TrySessionLock: %v, %v", granted, err)
	}
	holders, err := d.LockHolders(ctx, other, passes.SweepLockClass, keys)
	if err != nil {
		t.Fatal(err)
	}
	h, ok := holders[keys[0]]
	if len(holders) != 1 || !ok || h.PID != backend {
		t.Fatalf("holders %+v: want key %d alone, held by backend %d", holders, keys[0], backend)
	}
	if !target.NoLockHolderNames && h.ApplicationName != passes.MemberAppPrefix+"m1" {
		t.Fatalf("holder %+v: want its application name %q", h, passes.MemberAppPrefix+"m1")
	}
	if n, err := d.LocksHeld(ctx, other, passes.SweepLockClass, keys); err != nil || n != 1 {
		t.Fatalf("LocksHeld: %d, %v; want 1", n, err)
	}
	if n, err := d.LockLine(ctx, other, passes.SweepLockClass, keys[1]); err != nil || n != 0 {
		t.Fatalf("the line of a free lock: %d, %v; want 0", n, err)
	}
	w := conn(t, d, other)
	done := make(chan error, 1)
	go func() { done <- d.WaitSessionLock(ctx, w, passes.SweepLockClass, keys[0]) }()
	lineIs(t, d, other, passes.SweepLockClass, keys[0], 2)
	if _, err := d.ReleaseSessionLock(ctx, c, passes.SweepLockClass, keys[0]); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("the waiter: %v", err)
	}
	holders, err = d.LockHolders(ctx, db.DB, passes.SweepLockClass, keys[:1])
	if err != nil || holders[keys[0]].PID != w.backend {
		t.Fatalf("holders after the hand-over %+v, %v: want backend %d", holders, err, w.backend)
	}
	lineIs(t, d, other, passes.SweepLockClass, keys[0], 1)
}

// sessionLocksRefused: without session locks, the driver says so, and the lock views
// refuse rather than report nothing held.
func sessionLocksRefused(t *testing.T, db *DB) {
	ctx := context.Background()
	d := lockDriver(t, db.DB)
	if err := d.SessionLocks(); !errors.Is(err, driver.ErrLocksUnsupported) {
		t.Fatalf("SessionLocks: %v; want ErrLocksUnsupported", err)
	}
	if _, err := d.LockHolders(ctx, db.DB, passes.SweepLockClass, []int32{1}); !errors.Is(err, driver.ErrLocksUnsupported) {
		t.Fatalf("LockHolders: %v; want ErrLocksUnsupported", err)
	}
	if _, err := d.LocksHeld(ctx, db.DB, passes.SlotLockClass, []int32{1}); !errors.Is(err, driver.ErrLocksUnsupported) {
		t.Fatalf("LocksHeld: %v; want ErrLocksUnsupported", err)
	}
	if _, err := d.LockLine(ctx, db.DB, passes.QueueLockClass, 1); !errors.Is(err, driver.ErrLocksUnsupported) {
		t.Fatalf("LockLine: %v; want ErrLocksUnsupported", err)
	}
	if err := d.SetIdleTimeout(ctx, db.DB, time.Second); !errors.Is(err, driver.ErrLocksUnsupported) {
		t.Fatalf("SetIdleTimeout: %v; want ErrLocksUnsupported", err)
	}
}
