package supervisor

import (
	"slices"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/retentionkit/retention/core/clock"
)

// Child tells a strategy about the actor that failed.
type Child interface {
	// Interval returns the pass's normal interval, the floor for deterministic errors.
	Interval(pid *actor.PID) time.Duration
}

// Listener hears what a strategy decided, so the runtime can publish events and keep
// status. Its methods run on the supervising actor's goroutine and must not block.
type Listener interface {
	// Restarting is told that the actors are being restarted and must wait d.Delay
	// before their next sweep. The restart itself happens at once, so a pass in backoff
	// still answers status, trigger and stop requests; the restarted actor waits the
	// delay on the injected clock.
	Restarting(failed *actor.PID, restarted []*actor.PID, reason any, d Decision, attempt int)
	// GivingUp is told that the actors are about to be stopped for good, because the
	// restart limit was exceeded.
	GivingUp(failed *actor.PID, stopped []*actor.PID, reason any, failures int)
}

// Strategy is an actor.SupervisorStrategy whose restart window and backoff run on the
// injected clock. A one-for-one strategy restarts only the failed actor and keeps one
// history per actor; an all-for-one strategy restarts every child of the supervisor and
// keeps one history for the group.
type Strategy struct {
	clock     clock.Clock
	policy    Policy
	child     Child
	listener  Listener
	allForOne bool

	mu      sync.Mutex
	history map[string]*history // by child id, or "" for the whole group
}

type history struct {
	attempts int         // failures since the last good sweep: drives the backoff
	failures []time.Time // failure times inside the window: drive the limit
}

// NewOneForOne returns a strategy that restarts only the failed child.
func NewOneForOne(clk clock.Clock, p Policy, child Child, l Listener) *Strategy {
	return &Strategy{clock: clock.OrReal(clk), policy: p, child: child, listener: l, history: map[string]*history{}}
}

// NewAllForOne returns a strategy that restarts every child when one fails.
func NewAllForOne(clk clock.Clock, p Policy, child Child, l Listener) *Strategy {
	s := NewOneForOne(clk, p, child, l)
	s.allForOne = true
	return s
}

var _ actor.SupervisorStrategy = (*Strategy)(nil)

// HandleFailure records the failure, then either restarts the actors with the decided
// backoff or, past the restart limit, stops them for good.
func (s *Strategy) HandleFailure(_ *actor.ActorSystem, sup actor.Supervisor, child *actor.PID, _ *actor.RestartStatistics, reason, _ any) {
	targets := []*actor.PID{child}
	if s.allForOne {
		targets = slices.Clone(sup.Children())
	}
	attempt, failures, exceeded := s.record(child, !IsDrift(reason))
	if exceeded {
		s.listener.GivingUp(child, targets, reason, failures)
		sup.StopChildren(targets...)
		return
	}
	d := Decide(reason, attempt, s.child.Interval(child), s.policy.Backoff)
	s.listener.Restarting(child, targets, reason, d, attempt)
	sup.RestartChildren(targets...)
}

// record adds a failure and reports the attempt number, the failures in the window, and
// whether they exceed the limit. A failure that does not count (configuration drift)
// drives the backoff but stays out of the window.
func (s *Strategy) record(child *actor.PID, counts bool) (attempt, failures int, exceeded bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.historyLocked(child.Id)
	now := s.clock.Now()
	lim := s.policy.Limit.withDefaults()
	h.failures = slices.DeleteFunc(h.failures, func(t time.Time) bool { return now.Sub(t) >= lim.Window })
	if counts {
		h.failures = append(h.failures, now)
	}
	h.attempts++
	attempt, failures = h.attempts, len(h.failures)
	exceeded = counts && lim.MaxRestarts >= 0 && failures > lim.MaxRestarts
	if exceeded {
		// A stopped actor that is started again (a retried dead letter) begins afresh.
		*h = history{}
	}
	return attempt, failures, exceeded
}

func (s *Strategy) historyLocked(id string) *history {
	if s.allForOne {
		id = ""
	}
	h, ok := s.history[id]
	if !ok {
		h = &history{}
		s.history[id] = h
	}
	return h
}

// GoodSweep resets the backoff of the actor (or, all-for-one, of its group) after a sweep
// that succeeded, so the next failure waits the initial backoff again. The failure times
// that drive the restart limit are kept until they leave the window.
func (s *Strategy) GoodSweep(pid *actor.PID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.historyLocked(pid.Id).attempts = 0
}
