package actors

import (
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/retentionkit/retention/core"
	"github.com/retentionkit/retention/passes"
)

// Override is what an operator changed about a running pass (the node reads it from the
// ledger, so every node sharing one sees the same): nil fields keep the registration's
// value. The zero value overrides nothing.
type Override struct {
	BatchSize     *int
	BatchDelay    *time.Duration
	SweepInterval *time.Duration
	// Pacing names the pace controller ("fixed" or "adaptive"); empty keeps the
	// registration's. Like Runtime.SetPacing, it applies from the pass's next sweep.
	Pacing string
	// Paused holds the pass: the batch in flight finishes, then no batch and no sweep
	// starts until it is cleared; the sweep in progress then continues where it was.
	Paused bool
}

// apply returns o with the override's fields in place of the registration's.
func (ov Override) apply(o passes.Options) passes.Options {
	if ov.BatchSize != nil {
		o.BatchSize = *ov.BatchSize
	}
	if ov.BatchDelay != nil {
		o.BatchDelay = *ov.BatchDelay
	}
	if ov.SweepInterval != nil {
		o.SweepInterval = *ov.SweepInterval
	}
	return o
}

// Validate refuses values the runtime could not run with, naming the field as the
// configuration spells it.
func (ov Override) Validate(pass string) error {
	o := ov.apply(passes.DefaultOptions())
	if err := o.Validate(pass); err != nil {
		return err
	}
	switch passes.Pacing(ov.Pacing) {
	case "", passes.PacingFixed, passes.PacingAdaptive:
		return nil
	}
	msg := fmt.Sprintf("pass %q: pacing must be %q or %q, got %q", pass, passes.PacingFixed, passes.PacingAdaptive, ov.Pacing)
	return core.NewValidationErrorMessage(msg, map[string][]string{"pacing": {msg}})
}

// SettingsApplied says an operator's override reached a pass; the fields are the
// values in force from the next batch (and, for SweepInterval, the next wait) on.
type SettingsApplied struct {
	Name          string
	BatchSize     int
	BatchDelay    time.Duration
	SweepInterval time.Duration
	Pacing        string // the override; empty: the registration's controller
	Paused        bool
}

// PassName names the pass.
func (e SettingsApplied) PassName() string { return e.Name }

// setOverride carries an Override to the pass actor.
type setOverride struct{ ov Override }

// SetOverride replaces the named pass's override with ov (the zero Override returns
// it to its registration): batch size and delay from the next batch, a shorter interval
// ends the wait for the next sweep at once when it is already over, pause and resume
// as Override says. It fails with a *core.NotFoundError for an unknown name and a
// validation error for values the pass could not run with.
func (r *Runtime) SetOverride(name string, ov Override) error {
	if err := ov.Validate(name); err != nil {
		return err
	}
	c, err := r.runningCell(name)
	if err != nil {
		return err
	}
	c.setOverride(ov)
	r.system.Root.Send(c.pid.Load(), &setOverride{ov: ov})
	return nil
}

// setOverride records ov in the cell, so a restarted incarnation keeps it, and makes the
// effective options what opts() reads.
func (c *passCell) setOverride(ov Override) {
	opts := ov.apply(c.reg.Options)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.override = ov
	c.effective = &opts
	c.status.Paused = ov.Paused
	c.status.BatchSize, c.status.BatchDelay, c.status.SweepInterval = opts.BatchSize, opts.BatchDelay, opts.SweepInterval
	c.status.PacingOverride = ov.Pacing
	c.pacing = passes.Pacing(ov.Pacing) // Runtime.SetPacing's switch: from the next sweep
}

// options returns the registration's options with the operator's override applied.
func (c *passCell) options() passes.Options {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.effective == nil {
		return c.reg.Options
	}
	return *c.effective
}

func (c *passCell) paused() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.override.Paused
}

// onOverride applies an override that reached the actor.
func (a *passActor) onOverride(ctx actor.Context, m *setOverride) {
	opts := a.opts()
	a.d.publish(SettingsApplied{Name: a.name(), BatchSize: opts.BatchSize, BatchDelay: opts.BatchDelay,
		SweepInterval: opts.SweepInterval, Pacing: m.ov.Pacing, Paused: m.ov.Paused})
	if !opts.Enabled() || a.draining {
		return
	}
	if a.sweep != nil && !a.sweep.adaptive {
		a.sweep.size = opts.BatchSize // from the next batch; the controller sizes an adaptive one
	}
	if m.ov.Paused {
		a.hold(ctx)
		return
	}
	a.resume(ctx)
}

// hold stops what a pause stops at once: a batch waiting for its delay or admission
// gives its place back. A batch in flight finishes; its result holds the sweep.
func (a *passActor) hold(ctx actor.Context) {
	if a.sweep == nil {
		a.cell.update(func(s *PassStatus) { s.State = StatePaused })
		return
	}
	if a.inflight != nil {
		return
	}
	if a.timer != nil || a.req != 0 {
		a.stopTimer()
		a.releaseAdmission(ctx)
		a.held = true
		a.cell.update(func(s *PassStatus) { s.State = StatePaused })
	}
}

// resume continues a held sweep, starts a sweep held while it was due, and otherwise
// brings the next sweep forward when a shorter interval has made it due already.
func (a *passActor) resume(ctx actor.Context) {
	switch {
	case a.sweep != nil && a.held:
		a.held = false
		a.cell.update(func(s *PassStatus) { s.State = StateSweeping })
		if a.sweep.adaptive {
			a.batchAfter(ctx, a.paceNext())
			return
		}
		a.requestAdmission(ctx)
	case a.sweep == nil && a.heldSweep:
		a.heldSweep = false
		a.startSweep(ctx, a.heldTrigger)
	case a.sweep == nil:
		a.cell.update(func(s *PassStatus) {
			if s.State == StatePaused {
				s.State = StateWaiting
			}
		})
		if a.timer != nil {
			a.rescheduleSweep(ctx)
		}
	}
}

// rescheduleSweep moves the pending sweep to the last sweep's end plus the interval in
// force, when that is sooner than the timer: a shorter interval ends the wait.
func (a *passActor) rescheduleSweep(ctx actor.Context) {
	st := a.cell.snapshot()
	if st.LastSweepEnded.IsZero() || st.State != StateWaiting || st.NextSweep.IsZero() {
		return // the first sweep's stagger, or a backoff: not an interval
	}
	next := st.LastSweepEnded.Add(a.opts().EffectiveInterval())
	if !next.Before(st.NextSweep) {
		return
	}
	a.schedule(ctx, next.Sub(a.d.clock.Now()), tickSweep)
}

// holdSweep keeps a sweep that came due while the pass is paused, to start on resume.
func (a *passActor) holdSweep(trigger bool) {
	a.heldSweep = true
	a.heldTrigger = a.heldTrigger || trigger
	a.cell.update(func(s *PassStatus) { s.State = StatePaused; s.NextSweep = time.Time{} })
}
