package cluster

import (
	"context"
	"fmt"
	"slices"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/cluster"
)

// The reconciler: protoactor activates a grain only when something asks for it and
// re-activates nothing when a member is lost, so every member asks for the identities
// it owns, on every topology change and on a short tick, and deactivates those it no
// longer owns. Owning is rendezvous hashing over the members' addresses, the same hash
// protoactor's disthash places by, so the reconciler and the placement agree.

// reconcile runs rounds until ctx ends.
func (m *Member) reconcile(ctx context.Context) {
	topology := make(chan struct{}, 1)
	sub := m.system.EventStream.Subscribe(func(evt any) {
		if _, ok := evt.(*cluster.ClusterTopology); ok {
			select {
			case topology <- struct{}{}:
			default: // a round is already due
			}
		}
	})
	defer m.system.EventStream.Unsubscribe(sub)
	tick := make(chan struct{}, 1)
	for {
		m.ReconcileOnce()
		timer := m.o.Clock.AfterFunc(m.o.ReconcileEvery, func() {
			select {
			case tick <- struct{}{}:
			default:
			}
		})
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-topology:
			timer.Stop()
		case <-tick:
		}
	}
}

// placement is who owns each identity in one view of the topology.
type placement struct {
	self   string // this member's address
	listed bool   // this member is in its own member list
	rdv    *cluster.Rendezvous
	ids    map[string]string // address -> member id
}

func (m *Member) placement() placement {
	members := m.members()
	p := placement{self: m.system.Address(), rdv: cluster.NewRendezvous(), ids: map[string]string{}}
	p.rdv.UpdateMembers(members)
	for _, mem := range members {
		p.ids[mem.Address()] = memberID(mem)
		p.listed = p.listed || mem.Address() == p.self
	}
	return p
}

// ownerOf is the address of the member that owns identity, "" when there is none.
func (p placement) ownerOf(identity string) string {
	return p.rdv.GetByClusterIdentity(cluster.NewClusterIdentity(identity, Kind))
}

// owns reports whether this member owns identity. A member missing from its own list
// owns nothing: it is on its way to being fenced.
func (p placement) owns(identity string) bool {
	return p.listed && p.ownerOf(identity) == p.self
}

// ReconcileOnce runs one round: the passes this member owns are activated (drain
// helpers only on request, see DrainObserver), and the active ones it no longer owns
// are deactivated in the background, each letting its batch in flight finish.
func (m *Member) ReconcileOnce() {
	rt := m.rt.Load()
	if rt == nil {
		return
	}
	p := m.placement()
	active := rt.Active()
	owned := 0
	for _, name := range rt.PassNames() {
		mine := p.owns(name)
		_, helper := HelperOf(name)
		if mine && !helper {
			owned++
		}
		switch {
		case mine && !helper && !slices.Contains(active, name):
			if err := m.activateOwned(name); err != nil {
				m.o.Logger.WithError(err).WithField("pass", name).Debug("cluster: activation deferred to the next round")
			}
		case !mine && slices.Contains(active, name):
			m.deactivateInBackground(name)
		}
	}
	m.metrics.observe(len(p.ids), owned)
}

// activateOwned asks protoactor for the identity's grain (which activates the pass when
// it starts here) and activates the pass too, should its grain already run here.
func (m *Member) activateOwned(name string) error {
	pid := m.cluster.Get(name, Kind)
	if pid == nil {
		return fmt.Errorf("no activation for %q yet", name)
	}
	if pid.Address != m.system.Address() {
		return fmt.Errorf("%q is active at %s", name, pid.Address)
	}
	m.activate(name)
	return nil
}

// deactivateInBackground stops the named pass here without holding up the round: its
// in-flight batch may take a while.
func (m *Member) deactivateInBackground(name string) {
	if _, busy := m.leaving.LoadOrStore(name, struct{}{}); busy {
		return
	}
	go func() {
		defer m.leaving.Delete(name)
		if pid, ok := m.grains.Load(name); ok {
			m.system.Root.Poison(pid.(*actor.PID)) // its Stopping deactivates too; the runtime serialises both
		}
		m.deactivate(name)
	}()
}

// TriggerClaimed is the work-queue poller's Trigger in cluster mode: a claimed request
// reaches its pass here. An active pass is triggered; one that is not (a drain helper,
// or a pass that just moved here) is activated with the request as its first sweep. The
// poller claims only identities this member owns, so the grain normally starts here;
// one protoactor placed elsewhere fails the request's run with where it is.
func (m *Member) TriggerClaimed(ctx context.Context, name string, run int64) error {
	rt := m.rt.Load()
	if rt == nil {
		return fmt.Errorf("cluster: runtime not attached")
	}
	if slices.Contains(rt.Active(), name) {
		return rt.TriggerRun(name, run)
	}
	pid := m.cluster.Get(name, Kind)
	switch {
	case pid == nil:
		return fmt.Errorf("cluster: no activation for %q", name)
	case pid.Address != m.system.Address():
		return fmt.Errorf("cluster: %q is placed on %s", name, pid.Address)
	}
	return rt.ActivateFor(ctx, name, run)
}

// Owned names the identities this member owns now (passes and drain helpers): the
// work-queue poller's Claimable in cluster mode.
func (m *Member) Owned() []string {
	rt := m.rt.Load()
	if rt == nil {
		return nil
	}
	p := m.placement()
	var out []string
	for _, name := range rt.PassNames() {
		if p.owns(name) {
			out = append(out, name)
		}
	}
	return out
}
