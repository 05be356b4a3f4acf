package cluster_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/retentionkit/retention/core/clock"
	"github.com/retentionkit/retention/node/cluster"
)

// fakeMembership is a member list the test edits: whether this member is listed, and
// what the provider's health check says.
type fakeMembership struct {
	missing atomic.Bool
	health  atomic.Pointer[error]
}

func (f *fakeMembership) SelfListed() bool { return !f.missing.Load() }

func (f *fakeMembership) ProviderHealth() error {
	if e := f.health.Load(); e != nil {
		return *e
	}
	return nil
}

func TestWatchdogCheck(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	unhealthy := errors.New("watch failed")
	tests := []struct {
		name      string
		missing   bool
		health    error
		after     time.Duration
		want      string // "" = not fenced
		recovered bool   // the condition clears before the bound
	}{
		{name: "listed and healthy", after: time.Hour},
		{name: "missing within the bound", missing: true, after: 6 * time.Second},
		{name: "missing past the bound", missing: true, after: 6*time.Second + time.Millisecond, want: "missing from its member list"},
		{name: "unhealthy past the bound", health: unhealthy, after: 7 * time.Second, want: "watch failed"},
		{name: "missing, then back", missing: true, after: 10 * time.Second, recovered: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := &fakeMembership{}
			w := &cluster.Watchdog{Source: src, FenceAfter: 6 * time.Second}
			if w.Check(start) != nil {
				t.Fatal("fenced on the first look at a healthy member")
			}
			src.missing.Store(tt.missing)
			if tt.health != nil {
				src.health.Store(&tt.health)
			}
			if err := w.Check(start.Add(time.Second)); err != nil {
				t.Fatalf("fenced at once: %v", err)
			}
			if tt.recovered {
				src.missing.Store(false)
				if err := w.Check(start.Add(5 * time.Second)); err != nil {
					t.Fatal(err)
				}
				src.missing.Store(true) // missing again: the count starts over
			}
			err := w.Check(start.Add(time.Second + tt.after))
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("fenced: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("Check = %v, want fenced for %q", err, tt.want)
			}
		})
	}
}

// TestWatchdogRunFencesOnTheClock drives Run on the manual clock inside a synctest
// bubble, so each check has happened before the test looks: nothing happens while the
// member is listed, and once it goes missing Run fences on the first check past the
// bound.
func TestWatchdogRunFencesOnTheClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := clock.NewManual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
		src := &fakeMembership{}
		w := &cluster.Watchdog{Source: src, Clock: clk, FenceAfter: 6 * time.Second, Every: time.Second}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		result := make(chan *cluster.FencedError, 1)
		go func() { result <- w.Run(ctx) }()
		fenced := func() *cluster.FencedError {
			synctest.Wait()
			select {
			case err := <-result:
				return err
			default:
				return nil
			}
		}
		for range 30 {
			clk.Advance(time.Second)
			if err := fenced(); err != nil {
				t.Fatalf("a listed member was fenced: %v", err)
			}
		}
		src.missing.Store(true)
		// The first check after it went missing sees it missing (0s); the next six see it
		// missing for 1s..6s, within the bound; the eighth, 7s, fences.
		for i := 1; i <= 7; i++ {
			clk.Advance(time.Second)
			if err := fenced(); err != nil {
				t.Fatalf("fenced on check %d: %v", i, err)
			}
		}
		clk.Advance(time.Second)
		err := fenced()
		if err == nil || err.For != 7*time.Second || !strings.Contains(err.Error(), "missing from its member list") {
			t.Fatalf("check 8: %v, want fenced after 7s missing", err)
		}
	})
}

func TestWatchdogRunStopsWithItsContext(t *testing.T) {
	clk := clock.NewManual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	w := &cluster.Watchdog{Source: &fakeMembership{}, Clock: clk}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan *cluster.FencedError, 1)
	go func() { done <- w.Run(ctx) }()
	if err := clk.WaitPending(ctx, 1); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run = %v after its context ended, want nil", err)
	}
}
