package actors

import (
	"slices"

	"github.com/asynkron/protoactor-go/actor"
)

// PassNames returns the registered pass names, in registration order.
func (r *Runtime) PassNames() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var names []string
	for _, reg := range r.registry.All() {
		names = append(names, reg.Name)
	}
	return names
}

// Status returns a snapshot of every pass, in registration order, and of the admission
// pools.
func (r *Runtime) Status() Status {
	r.mu.Lock()
	cells := slices.Clone(r.order)
	r.mu.Unlock()
	st := Status{Slots: map[string]SlotStatus{}}
	for _, c := range cells {
		ps := c.snapshot()
		st.Passes = append(st.Passes, ps)
		st.Degraded = st.Degraded || ps.Degraded
		st.Drift = st.Drift || ps.Drift
	}
	for db, pool := range r.dbSlotPool {
		st.Slots[db] = pool.Status()
	}
	return st
}

// ObserverFailures returns how many observer calls failed and how many failure reports
// failed in turn.
func (r *Runtime) ObserverFailures() (failures, reporterFailures int64) {
	if r.guard == nil {
		return 0, 0
	}
	return r.guard.Failures(), r.guard.ReporterFailures()
}

// System returns the actor system the runtime runs in (nil before Start).
func (r *Runtime) System() *actor.ActorSystem {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.system
}

// PassPID returns the PID of the named pass's actor, for a caller that wants to watch
// it; nil when there is none. The PID stays the same across supervised restarts.
func (r *Runtime) PassPID(name string) *actor.PID {
	r.mu.Lock()
	c := r.cells[name]
	r.mu.Unlock()
	if c == nil {
		return nil
	}
	return c.pid.Load()
}
