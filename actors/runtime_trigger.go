package actors

import (
	"fmt"

	"github.com/retentionkit/retention/core"
)

// Trigger asks the named pass to sweep now: at once when it is idle, or right after the
// sweep it is running (a trigger never overlaps a sweep, and several triggers during one
// sweep make one follow-up). A trigger also cuts a backoff short. It fails with a
// *core.NotFoundError for an unknown name and a *core.BusinessRuleError for a pass that
// never sweeps or was stopped.
func (r *Runtime) Trigger(name string) error { return r.TriggerRun(name) }

// TriggerRun is Trigger on behalf of requested sweeps recorded in the ledger: the sweep
// it starts (or the follow-up it schedules) carries runs in its SweepStarted, so the
// ledger observer finishes those runs instead of starting a new one.
func (r *Runtime) TriggerRun(name string, runs ...int64) error {
	c, err := r.runningCell(name)
	if err != nil {
		return err
	}
	if !c.reg.Options.Enabled() {
		return core.NewBusinessRuleError(fmt.Sprintf("pass %q has no retention period, so it never sweeps", name))
	}
	if _, degraded := c.gaveUpWith(); degraded {
		return core.NewBusinessRuleError(fmt.Sprintf("pass %q was stopped by supervision", name))
	}
	pid := c.pid.Load()
	if pid == nil {
		return core.NewBusinessRuleError(fmt.Sprintf("pass %q is not active on this member", name))
	}
	r.system.Root.Send(pid, &triggerSweep{runs: runs})
	return nil
}

// runningCell returns the named pass of a running runtime, or why there is none.
func (r *Runtime) runningCell(name string) (*passCell, error) {
	r.mu.Lock()
	c, running := r.cells[name], r.started && !r.stopped
	r.mu.Unlock()
	switch {
	case !running:
		return nil, errNotRunning()
	case c == nil:
		return nil, core.NewNotFoundError("pass", name)
	}
	return c, nil
}
