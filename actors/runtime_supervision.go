package actors

import (
	"context"
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/retentionkit/retention/core"
	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/supervisor"
)

func (r *Runtime) cellOf(pid *actor.PID) *passCell {
	if c, ok := r.byPID.Load(pid.Id); ok {
		return c.(*passCell)
	}
	return nil
}

// supervision is the runtime as its strategies see it: the child lookup and the
// listener, kept off the Runtime's own method set.
type supervision struct{ r *Runtime }

// Interval tells supervision a pass's normal interval.
func (s supervision) Interval(pid *actor.PID) time.Duration {
	if c := s.r.cellOf(pid); c != nil {
		return c.reg.Options.EffectiveInterval()
	}
	return passes.DefaultSweepInterval
}

// Restarting records the backoff for each restarted pass and publishes PassRestarted.
func (s supervision) Restarting(failed *actor.PID, restarted []*actor.PID, reason any, d supervisor.Decision, attempt int) {
	err := reasonError(reason)
	if c := s.r.cellOf(failed); c != nil {
		c.noteFailure(d.Class, err)
	}
	for _, pid := range restarted {
		if c := s.r.cellOf(pid); c != nil {
			c.noteRestart(d.Delay)
			s.r.d.publish(PassRestarted{Name: c.reg.Name, Attempt: attempt, Backoff: d.Delay, Class: d.Class, Err: err})
		}
	}
}

// GivingUp marks each stopped pass degraded; its PassStopped event follows when the
// actor stops.
func (s supervision) GivingUp(_ *actor.PID, stopped []*actor.PID, reason any, failures int) {
	err := fmt.Errorf("%d failures within the restart window: %w", failures, reasonError(reason))
	for _, pid := range stopped {
		if c := s.r.cellOf(pid); c != nil {
			c.noteGaveUp(err)
		}
	}
}

func reasonError(reason any) error {
	if err, ok := reason.(error); ok {
		return err
	}
	return &core.PanicError{Value: reason}
}

// Revive starts a new actor for a pass that supervision stopped, as a dead-letter retry
// does, and returns once it runs. Its restart history starts afresh. A pass that is
// running is a *core.BusinessRuleError; an unknown one a *core.NotFoundError.
func (r *Runtime) Revive(ctx context.Context, name string) error {
	c, err := r.runningCell(name)
	if err != nil {
		return err
	}
	if _, degraded := c.gaveUpWith(); !degraded {
		return core.NewBusinessRuleError(fmt.Sprintf("pass %q is running; only a pass stopped by supervision can be revived", name))
	}
	select {
	case <-c.goneCh(): // the old actor is gone: its PassStopped is out
	case <-ctx.Done():
		return ctx.Err()
	}
	done := make(chan struct{})
	r.system.Root.Send(c.group, &revivePass{cell: c, done: done})
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// degraded reports whether the named pass exists and was stopped by supervision.
func (r *Runtime) degraded(name string) (exists, degraded bool) {
	r.mu.Lock()
	c := r.cells[name]
	r.mu.Unlock()
	if c == nil {
		return false, false
	}
	_, degraded = c.gaveUpWith()
	return true, degraded
}
