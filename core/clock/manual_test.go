package clock_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/retentionkit/retention/core/clock"
)

var start = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func TestManual(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		run  func(t *testing.T, m *clock.Manual)
	}{
		{"now moves only on Advance", func(t *testing.T, m *clock.Manual) {
			if !m.Now().Equal(start) {
				t.Fatalf("Now = %v", m.Now())
			}
			m.Advance(90 * time.Second)
			if got := m.Now().Sub(start); got != 90*time.Second {
				t.Fatalf("advanced by %v", got)
			}
		}},
		{"timers fire in due order, ties in scheduling order", func(t *testing.T, m *clock.Manual) {
			var fired []string
			m.AfterFunc(3*time.Second, func() { fired = append(fired, "c") })
			m.AfterFunc(1*time.Second, func() { fired = append(fired, "a1") })
			m.AfterFunc(1*time.Second, func() { fired = append(fired, "a2") })
			m.AfterFunc(2*time.Second, func() { fired = append(fired, "b") })
			m.AfterFunc(5*time.Second, func() { fired = append(fired, "late") })
			m.Advance(3 * time.Second)
			if want := []string{"a1", "a2", "b", "c"}; !slices.Equal(fired, want) {
				t.Fatalf("fired %v, want %v", fired, want)
			}
			if m.Pending() != 1 {
				t.Fatalf("Pending = %d, want 1", m.Pending())
			}
		}},
		{"now reads the due time inside a callback", func(t *testing.T, m *clock.Manual) {
			var at time.Time
			m.AfterFunc(2*time.Second, func() { at = m.Now() })
			m.Advance(time.Hour)
			if !at.Equal(start.Add(2 * time.Second)) {
				t.Fatalf("callback saw %v", at)
			}
			if !m.Now().Equal(start.Add(time.Hour)) {
				t.Fatalf("Now after Advance = %v", m.Now())
			}
		}},
		{"a timer scheduled by a callback within the span fires too", func(t *testing.T, m *clock.Manual) {
			var fired []time.Duration
			var tick func()
			tick = func() {
				fired = append(fired, m.Now().Sub(start))
				m.AfterFunc(time.Second, tick)
			}
			m.AfterFunc(time.Second, tick)
			m.Advance(3 * time.Second)
			if want := []time.Duration{time.Second, 2 * time.Second, 3 * time.Second}; !slices.Equal(fired, want) {
				t.Fatalf("fired at %v, want %v", fired, want)
			}
		}},
		{"stop prevents the call", func(t *testing.T, m *clock.Manual) {
			called := false
			tm := m.AfterFunc(time.Second, func() { called = true })
			if !tm.Stop() {
				t.Fatal("Stop of a pending timer = false")
			}
			if tm.Stop() {
				t.Fatal("second Stop = true")
			}
			m.Advance(time.Minute)
			if called {
				t.Fatal("a stopped timer fired")
			}
		}},
		{"stop after firing reports false", func(t *testing.T, m *clock.Manual) {
			tm := m.AfterFunc(time.Second, func() {})
			m.Advance(time.Second)
			if tm.Stop() {
				t.Fatal("Stop after firing = true")
			}
		}},
		{"zero duration fires on the next advance", func(t *testing.T, m *clock.Manual) {
			called := false
			m.AfterFunc(0, func() { called = true })
			if called {
				t.Fatal("fired without an Advance")
			}
			m.Advance(0)
			if !called {
				t.Fatal("did not fire on Advance(0)")
			}
		}},
		{"next due reports the earliest timer", func(t *testing.T, m *clock.Manual) {
			if _, ok := m.NextDue(); ok {
				t.Fatal("NextDue with no timers")
			}
			m.AfterFunc(5*time.Second, func() {})
			m.AfterFunc(2*time.Second, func() {})
			if due, ok := m.NextDue(); !ok || !due.Equal(start.Add(2*time.Second)) {
				t.Fatalf("NextDue = %v, %v", due, ok)
			}
		}},
		{"wait pending returns once a timer is scheduled elsewhere", func(t *testing.T, m *clock.Manual) {
			go m.AfterFunc(time.Second, func() {})
			if err := m.WaitPending(context.Background(), 1); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			if err := m.WaitPending(ctx, 2); err == nil {
				t.Fatal("WaitPending ignored its context")
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, clock.NewManual(start)) })
	}
}

func TestRealClockAfterFuncStops(t *testing.T) {
	t.Parallel()
	c := clock.Real()
	tm := c.AfterFunc(time.Hour, func() { t.Error("fired") })
	if !tm.Stop() {
		t.Fatal("Stop = false")
	}
	if clock.OrReal(nil) == nil {
		t.Fatal("OrReal(nil) = nil")
	}
}
