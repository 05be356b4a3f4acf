package actors

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/retentionkit/retention/core"
)

// Placement: with Config.Placed, the runtime registers and supervises every pass but
// spawns none at Start. Something outside the runtime (cluster mode's reconciler and the
// grains it activates) decides which passes run here and calls Activate and Deactivate.
// A pass that is not active reports StateInactive and refuses triggers. Without Placed
// nothing here is used and every pass starts at Start, as before.

// StateInactive is a placed pass that is not active on this runtime (it runs on another
// member, or nowhere yet).
const StateInactive PassState = "inactive"

// reasonDeactivated is PassStopped's Reason for a pass Deactivate stopped.
const reasonDeactivated = "deactivated: placed elsewhere"

// cellPlacement is what a pass cell keeps for placement.
type cellPlacement struct {
	mu      sync.Mutex  // serialises Activate and Deactivate of one pass
	leaving atomic.Bool // Deactivate is stopping the actor

	firstMu sync.Mutex
	first   *[]int64 // set by ActivateFor: the first sweep is this trigger, not the schedule
}

// takeFirst returns and clears the trigger ActivateFor left for the next actor.
func (p *cellPlacement) takeFirst() ([]int64, bool) {
	p.firstMu.Lock()
	defer p.firstMu.Unlock()
	if p.first == nil {
		return nil, false
	}
	runs := *p.first
	p.first = nil
	return runs, true
}

func (p *cellPlacement) setFirst(runs []int64) {
	p.firstMu.Lock()
	defer p.firstMu.Unlock()
	p.first = &runs
}

// activatePass asks a group to spawn the actor of a placed pass.
type activatePass struct {
	cell *passCell
	done chan<- struct{}
}

// Activate starts the named pass's actor on a runtime started with Config.Placed and
// returns once it runs; its first sweep follows its stagger offset, as at Start. An
// active pass is left alone, so callers may activate on every reconciliation. A pass
// supervision stopped while active stays stopped until revived. An unknown pass is a
// *core.NotFoundError; a runtime without Placed, or not running, a
// *core.BusinessRuleError.
func (r *Runtime) Activate(ctx context.Context, name string) error {
	return r.activate(ctx, name, nil)
}

// ActivateFor is Activate for a requested sweep: the pass's first sweep is a triggered
// one serving the ledger runs in runs, at once, instead of its scheduled first sweep. A
// pass already active is triggered (TriggerRun). Cluster mode starts drain helpers this
// way, so a helper sweeps only when asked.
func (r *Runtime) ActivateFor(ctx context.Context, name string, runs ...int64) error {
	return r.activate(ctx, name, &runs)
}

func (r *Runtime) activate(ctx context.Context, name string, first *[]int64) error {
	c, err := r.placedCell(name)
	if err != nil {
		return err
	}
	c.place.mu.Lock()
	defer c.place.mu.Unlock()
	if c.pid.Load() != nil {
		if first != nil {
			return r.TriggerRun(name, *first...)
		}
		return nil
	}
	if first != nil {
		if !c.reg.Options.Enabled() {
			return core.NewBusinessRuleError(fmt.Sprintf("pass %q has no retention period, so it never sweeps", name))
		}
		c.place.setFirst(*first)
	}
	c.revived() // a pass placed here again starts with a clean supervision history
	done := make(chan struct{})
	r.system.Root.Send(c.group, &activatePass{cell: c, done: done})
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("activate pass %q: %w", name, ctx.Err())
	}
}

// Deactivate stops the named pass's actor gracefully: no new batch starts, the batch in
// flight finishes, then the actor stops and the pass reports StateInactive. When ctx ends
// first the in-flight batch is cancelled (one transaction, so nothing is half-deleted).
// A pass that is not active is left alone.
func (r *Runtime) Deactivate(ctx context.Context, name string) error {
	c, err := r.placedCell(name)
	if err != nil {
		return err
	}
	c.place.mu.Lock()
	defer c.place.mu.Unlock()
	pid := c.pid.Load()
	if pid == nil {
		return nil
	}
	c.place.leaving.Store(true)
	defer c.place.leaving.Store(false)
	if _, degraded := c.gaveUpWith(); !degraded {
		done, closed := make(chan struct{}), make(chan struct{})
		r.system.Root.Send(pid, &drainPass{done: done, closed: closed})
		select {
		case <-done:
			select { // the sweep's lock is given back before the pass counts as gone from here
			case <-closed:
			case <-c.goneCh():
			case <-ctx.Done():
			}
		case <-c.goneCh():
		case <-ctx.Done(): // stopping the actor cancels its batch
		}
	}
	_ = r.system.Root.StopFuture(pid).Wait()
	r.byPID.Delete(pid.Id)
	c.pid.Store(nil)
	c.update(func(s *PassStatus) { s.State = StateInactive })
	return nil
}

// Active returns the names of the passes whose actor runs here, in registration order.
// Without Config.Placed that is every pass.
func (r *Runtime) Active() []string {
	r.mu.Lock()
	cells := append([]*passCell(nil), r.order...)
	r.mu.Unlock()
	var names []string
	for _, c := range cells {
		if c.pid.Load() != nil {
			names = append(names, c.reg.Name)
		}
	}
	return names
}

// placedCell is runningCell for the placement calls.
func (r *Runtime) placedCell(name string) (*passCell, error) {
	if !r.cfg.Placed {
		return nil, core.NewBusinessRuleError("retention: Activate and Deactivate need Config.Placed")
	}
	return r.runningCell(name)
}

// spawnPlaced is the group's half of Activate.
func (g *groupActor) spawnPlaced(ctx actor.Context, m *activatePass) {
	pid := ctx.SpawnPrefix(newPassProps(m.cell, g.d), "pass-placed")
	m.cell.pid.Store(pid)
	g.rt.byPID.Store(pid.Id, m.cell)
	close(m.done)
}
