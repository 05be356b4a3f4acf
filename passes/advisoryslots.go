package passes

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes/driver"
)

// AdvisorySlots is a database's cluster-wide limit on concurrent deletes, kept by the
// database's session locks (the driver's Locks; PostgreSQL's advisory locks): slot i of a limit of n is the session advisory lock (SlotLockClass,
// LockKey(name+"#slot"+i)), and a line in front of the slots is the lock
// (QueueLockClass, LockKey(name)). Every member of a cluster opens one per database
// under the same name, and between them they never hold more slots than the limit.
//
// Taking a slot: a connection of its own waits for the queue lock with the blocking
// WaitSessionLock, whose waiters the server serves in the order they asked (try-locks
// alone are not: a newcomer could overtake a long waiter); the session at the head of
// the line tries the slot locks until one is free, then lets go of the queue lock, and
// keeps the slot on the same connection until it is released. Only the head polls, once
// per SlotPollMin..SlotPollMax while every slot is taken; the rest sleep in the lock
// manager. Every lock is a session lock, so a member that dies gives back its place in
// line and its slots with its connections (see SweepConnOptions for how soon). A member
// that is paused keeps its slots until it wakes, but not the head of the line: the
// waiting connection's session ends after SweepConnOptions.HeadIdleTimeout without a
// poll, so one frozen member cannot stall every other member's deletes.
//
// Two slot keys of one name may collide (see LockKey): the limit is then one lower,
// never higher. Members that disagree on the limit each use their own n: the
// cluster-wide bound is the largest.
type AdvisorySlots struct {
	db   *bun.DB
	drv  driver.Driver
	own  bool // db was opened for the slots and is closed with them
	name string
	conn SweepConnOptions
	// pollMin and pollMax replace SlotPollMin and SlotPollMax when set (tests pause a
	// head by making its next poll an hour away).
	pollMin, pollMax time.Duration
}

// The head of the line's poll interval while every slot is taken: it starts at
// SlotPollMin and doubles up to SlotPollMax, so a slot freed soon is taken soon and a
// long wait costs a few statements a second.
const (
	SlotPollMin = 2 * time.Millisecond
	SlotPollMax = 50 * time.Millisecond
)

// OpenAdvisorySlots opens the slots of the database dsn names, under name (the
// database's name in the node's configuration: every member must use the same one), on
// a small pool of their own: with no driver read timeout, since a place in line may be
// held for as long as a slot is busy, and with conn's client-side keepalives, so a dead
// server still fails the wait. Every connection gets conn's session settings. Close
// closes the pool. The DSN is PostgreSQL's; OpenAdvisorySlotsWith takes the driver's
// name.
func OpenAdvisorySlots(ctx context.Context, dsn, name string, conn SweepConnOptions) (*AdvisorySlots, error) {
	return OpenAdvisorySlotsWith(ctx, DriverPostgres, dsn, name, conn)
}

// OpenAdvisorySlotsWith is OpenAdvisorySlots on the driver a config's database.driver
// names. A driver without session locks is refused with an error wrapping
// ErrClusterUnsupported.
func OpenAdvisorySlotsWith(ctx context.Context, driverName, dsn, name string, conn SweepConnOptions) (*AdvisorySlots, error) {
	if name == "" {
		return nil, errors.New("advisory slots need the database's name")
	}
	db, err := OpenWith(ctx, driverName, dsn, OpenOptions{Cluster: &conn, NoReadTimeout: true})
	if err != nil {
		return nil, err
	}
	if err := CheckClusterSupport(ctx, db); err != nil {
		_ = db.Close()
		return nil, err
	}
	d, err := DriverFor(db)
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	return &AdvisorySlots{db: db, drv: d, own: true, name: name, conn: conn}, nil
}

// Close closes the slots' own pool; slots still held are given back with it.
func (s *AdvisorySlots) Close() error {
	if !s.own {
		return nil
	}
	return s.db.Close()
}

func (s *AdvisorySlots) queueKey() int32 { return LockKey(s.name) }

func (s *AdvisorySlots) slotKeys(capacity int) []int32 {
	keys := make([]int32, capacity)
	for i := range keys {
		keys[i] = LockKey(s.name + "#slot" + strconv.Itoa(i))
	}
	return keys
}

// AcquireSlot waits in line for one of capacity slots and returns it held; Close on the
// result gives it back. It returns early with ctx's error when ctx ends, holding
// nothing and out of the line.
func (s *AdvisorySlots) AcquireSlot(ctx context.Context, capacity int) (io.Closer, error) {
	if capacity < 1 {
		return nil, fmt.Errorf("slots of %q: capacity must be at least 1, got %d", s.name, capacity)
	}
	c, err := s.db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("slots of %q: %w", s.name, err)
	}
	// WaitUnbounded: the wait in line must not time out, whatever the role's default.
	session := s.conn.lockSession()
	session.WaitUnbounded = true
	pid, err := s.drv.ApplyLockSession(ctx, c, session)
	if err == nil && s.conn.headIdleTimeout() > 0 {
		err = s.drv.SetIdleTimeout(ctx, c, s.conn.headIdleTimeout())
	}
	if err != nil {
		discard(c)
		return nil, fmt.Errorf("slots of %q: %w", s.name, err)
	}
	// The client may not interrupt a statement when its context ends (pgdriver does
	// not): ask the server, and again until this wait is over, since a cancel that lands
	// between two statements is lost.
	db, drv, finished := s.db, s.drv, make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		for {
			cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_ = drv.CancelStatement(cctx, db, pid)
			cancel()
			t := time.NewTimer(100 * time.Millisecond)
			select {
			case <-finished:
				t.Stop()
				return
			case <-t.C:
			}
		}
	})
	slot, err := s.takeSlot(ctx, c, capacity)
	close(finished)
	if !stop() || err != nil {
		// Ended, or a cancel may be on its way to this session: it holds nothing after this.
		discard(c)
		if err == nil || ctx.Err() != nil {
			return nil, fmt.Errorf("slots of %q: %w", s.name, context.Cause(ctx))
		}
		return nil, fmt.Errorf("slots of %q: %w", s.name, err)
	}
	return slot, nil
}

// takeSlot waits for the queue lock on c, then takes the first free slot, leaving the
// line in the same statement; while every slot is taken it tries again (see SlotPollMin).
func (s *AdvisorySlots) takeSlot(ctx context.Context, c bun.Conn, capacity int) (io.Closer, error) {
	if err := s.drv.WaitSessionLock(ctx, c, QueueLockClass, s.queueKey()); err != nil {
		return nil, err
	}
	keys := s.slotKeys(capacity)
	// Polling with try-locks, not waiting on a slot with a lock_timeout: a timeout that
	// fires as the lock is granted fails the statement yet leaves the session holding the
	// lock, and the next try would take it a second time (session advisory locks nest).
	wait, longest := SlotPollMin, SlotPollMax
	if s.pollMin > 0 {
		wait, longest = s.pollMin, s.pollMax
	}
	for {
		// The first free slot, leaving the line in the same statement only with one taken.
		slot, left, err := s.drv.TryFirstSessionLock(ctx, c, SlotLockClass, keys, QueueLockClass, s.queueKey())
		if err != nil {
			return nil, err
		}
		if slot >= 0 {
			if !left {
				return nil, errors.New("the queue lock was not held at the head of the line")
			}
			if s.conn.headIdleTimeout() > 0 {
				// The holder may idle for a whole sweep. That this statement succeeds also
				// proves the session, and with it the slot, outlived the wait.
				if err := s.drv.SetIdleTimeout(ctx, c, 0); err != nil {
					return nil, fmt.Errorf("end the head's idle timeout: %w", err)
				}
			}
			return &heldSlot{conn: c, drv: s.drv, key: keys[slot]}, nil
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
		wait = min(2*wait, longest)
	}
}

// heldSlot is one slot, held by its connection.
type heldSlot struct {
	conn bun.Conn
	drv  driver.Driver
	key  int32
	done bool
}

// Close gives the slot back and the connection to the pool; a connection whose slot
// could not be given back is closed instead, which gives it back too.
func (h *heldSlot) Close() error {
	if h.done {
		return nil
	}
	h.done = true
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	released, err := h.drv.ReleaseSessionLock(ctx, h.conn, SlotLockClass, h.key)
	if err != nil || !released {
		discard(h.conn)
		return err
	}
	return h.conn.Close()
}

// SlotsWaiting returns how many sessions, on any member, are in line for a slot: waiting
// for the queue lock or, at its head, for a slot to free. It is what tells a holder that
// someone waits for its slot.
func (s *AdvisorySlots) SlotsWaiting(ctx context.Context) (int, error) {
	n, err := s.drv.LockLine(ctx, s.db, QueueLockClass, s.queueKey())
	if err != nil {
		return 0, fmt.Errorf("slots of %q: read the line: %w", s.name, err)
	}
	return n, nil
}

// SlotsInUse returns how many of capacity slots are held right now, by any member.
func (s *AdvisorySlots) SlotsInUse(ctx context.Context, capacity int) (int, error) {
	n, err := s.drv.LocksHeld(ctx, s.db, SlotLockClass, s.slotKeys(capacity))
	if err != nil {
		return 0, fmt.Errorf("slots of %q: read the slots in use: %w", s.name, err)
	}
	return n, nil
}
