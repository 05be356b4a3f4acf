package clock

import (
	"context"
	"slices"
	"sync"
	"time"
)

// Manual is a Clock that moves only when told to. Timers scheduled on it fire during
// Advance, in the order of their due times (and of their scheduling, for equal times),
// each on the goroutine that called Advance, with Now reading the timer's due time while
// its callback runs. A timer that a callback schedules within the advanced span fires in
// the same Advance. That makes any sequence of timers deterministic.
//
// A timer scheduled with a zero or negative duration is due at once and fires at the
// next Advance, also Advance(0); nothing on a Manual clock fires by itself.
type Manual struct {
	mu      sync.Mutex
	now     time.Time
	seq     uint64
	timers  []*manualTimer
	changed chan struct{} // closed and replaced whenever the set of timers changes
}

// NewManual returns a manual clock reading start.
func NewManual(start time.Time) *Manual {
	return &Manual{now: start, changed: make(chan struct{})}
}

type manualTimer struct {
	clock *Manual
	due   time.Time
	seq   uint64
	f     func()
}

// Now returns the clock's current time.
func (m *Manual) Now() time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.now
}

// AfterFunc schedules f for d from now on this clock.
func (m *Manual) AfterFunc(d time.Duration, f func()) Timer {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.seq++
	t := &manualTimer{clock: m, due: m.now.Add(max(d, 0)), seq: m.seq, f: f}
	m.timers = append(m.timers, t)
	m.signalLocked()
	return t
}

// Stop removes the timer if it has not fired yet.
func (t *manualTimer) Stop() bool {
	m := t.clock
	m.mu.Lock()
	defer m.mu.Unlock()
	i := slices.Index(m.timers, t)
	if i < 0 {
		return false
	}
	m.timers = slices.Delete(m.timers, i, i+1)
	m.signalLocked()
	return true
}

// Advance moves the clock forward by d, firing every timer that falls due on the way.
// A negative d is treated as zero.
func (m *Manual) Advance(d time.Duration) {
	m.mu.Lock()
	target := m.now.Add(max(d, 0))
	m.mu.Unlock()
	m.AdvanceTo(target)
}

// AdvanceTo moves the clock to t, firing every timer due at or before t. A t in the past
// moves nothing but still fires timers already due.
func (m *Manual) AdvanceTo(t time.Time) {
	for {
		m.mu.Lock()
		next := m.nextDueLocked(t)
		if next == nil {
			if t.After(m.now) {
				m.now = t
			}
			m.mu.Unlock()
			return
		}
		m.timers = slices.DeleteFunc(m.timers, func(x *manualTimer) bool { return x == next })
		if next.due.After(m.now) {
			m.now = next.due
		}
		m.signalLocked()
		m.mu.Unlock()
		next.f()
	}
}

// nextDueLocked returns the earliest timer due at or before limit, or nil.
func (m *Manual) nextDueLocked(limit time.Time) *manualTimer {
	var best *manualTimer
	for _, t := range m.timers {
		if t.due.After(limit) {
			continue
		}
		if best == nil || t.due.Before(best.due) || (t.due.Equal(best.due) && t.seq < best.seq) {
			best = t
		}
	}
	return best
}

// Pending returns how many timers are scheduled and not yet fired or stopped.
func (m *Manual) Pending() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.timers)
}

// NextDue returns the due time of the earliest pending timer, and false when none is.
func (m *Manual) NextDue() (time.Time, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.timers) == 0 {
		return time.Time{}, false
	}
	t := m.nextDueLocked(maxTime)
	return t.due, true
}

var maxTime = time.Unix(1<<62, 0)

// WaitPending blocks until at least n timers are pending, or ctx ends. Code under test
// usually schedules its next timer from another goroutine; waiting for it before calling
// Advance is what keeps a test free of sleeps and races.
func (m *Manual) WaitPending(ctx context.Context, n int) error {
	for {
		m.mu.Lock()
		count, changed := len(m.timers), m.changed
		m.mu.Unlock()
		if count >= n {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (m *Manual) signalLocked() {
	close(m.changed)
	m.changed = make(chan struct{})
}
