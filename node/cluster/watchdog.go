package cluster

import (
	"context"
	"fmt"
	"time"

	"github.com/retentionkit/retention/core/clock"
)

// MembershipSource is what the watchdog watches: whether this member is in its own
// member list, and whether the membership provider reports itself healthy.
type MembershipSource interface {
	SelfListed() bool
	ProviderHealth() error
}

// FencedError says why a member fenced itself. The node stops its runtime and exits
// with ExitFenced; the process manager's restart brings it back as a new member.
type FencedError struct {
	Reason string
	For    time.Duration
}

func (e *FencedError) Error() string {
	return fmt.Sprintf("cluster: fenced: %s for %v; stopping so the process manager restarts this node as a new member", e.Reason, e.For.Round(time.Millisecond))
}

// ExitFenced is the exit code of a node that fenced itself.
const ExitFenced = 3

// DefaultWatchEvery is how often the watchdog looks when Watchdog.Every is zero.
const DefaultWatchEvery = 250 * time.Millisecond

// Watchdog fences a member that has dropped out of the topology. At our protoactor
// version a member the others saw leave is blocked by them for good and never told
// (its lease ran out during a pause, or etcd stalled); it would run on as a zombie
// owning nothing, or, with its old view, as a second owner. So when the member's own id
// has been missing from its member list, or the provider unhealthy, for longer than
// FenceAfter, Run returns a *FencedError.
type Watchdog struct {
	Source MembershipSource
	// Clock times the checks; nil is the wall clock. Tests pass a *clock.Manual.
	Clock clock.Clock
	// FenceAfter is the bound (DefaultFenceAfter when zero).
	FenceAfter time.Duration
	// Every is the time between checks (DefaultWatchEvery when zero).
	Every time.Duration

	missingSince, unhealthySince time.Time
}

// Check looks once, at now: it returns a *FencedError once a condition has held past
// the bound, nil otherwise.
func (w *Watchdog) Check(now time.Time) *FencedError {
	bound := w.FenceAfter
	if bound <= 0 {
		bound = DefaultFenceAfter
	}
	if w.Source.SelfListed() {
		w.missingSince = time.Time{}
	} else if w.missingSince.IsZero() {
		w.missingSince = now
	}
	health := w.Source.ProviderHealth()
	if health == nil {
		w.unhealthySince = time.Time{}
	} else if w.unhealthySince.IsZero() {
		w.unhealthySince = now
	}
	switch {
	case !w.missingSince.IsZero() && now.Sub(w.missingSince) > bound:
		return &FencedError{Reason: "this member's id is missing from its member list", For: now.Sub(w.missingSince)}
	case !w.unhealthySince.IsZero() && now.Sub(w.unhealthySince) > bound:
		return &FencedError{Reason: fmt.Sprintf("the membership provider reports %v", health), For: now.Sub(w.unhealthySince)}
	}
	return nil
}

// Run checks every Every until a check fences (the error is returned) or ctx ends (nil).
func (w *Watchdog) Run(ctx context.Context) *FencedError {
	clk := clock.OrReal(w.Clock)
	every := w.Every
	if every <= 0 {
		every = DefaultWatchEvery
	}
	tick := make(chan struct{}, 1)
	for {
		if err := w.Check(clk.Now()); err != nil {
			return err
		}
		t := clk.AfterFunc(every, func() { tick <- struct{}{} })
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-tick:
		}
	}
}

// memberSource is a Member as its watchdog sees it.
type memberSource struct{ m *Member }

func (s memberSource) SelfListed() bool { return s.m.placement().listed }

func (s memberSource) ProviderHealth() error {
	if h, ok := s.m.provider.(interface{ GetHealthStatus() error }); ok {
		return h.GetHealthStatus()
	}
	return nil
}
