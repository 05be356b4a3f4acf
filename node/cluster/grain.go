package cluster

import (
	"context"
	"errors"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/cluster"

	"github.com/retentionkit/retention/actors"
)

// grain is a pass identity's activation on this member. It holds no state and runs no
// batch itself: it activates the runtime's pass actor of the same name when protoactor
// places it here and deactivates it (gracefully) when protoactor stops it, such as when
// a topology change moves the identity to another member.
type grain struct {
	m  *Member
	id string
}

func (g *grain) Receive(ctx actor.Context) {
	switch msg := ctx.Message().(type) {
	case *cluster.ClusterInit:
		g.id = msg.Identity.Identity
		g.m.grains.Store(g.id, ctx.Self())
		if _, helper := HelperOf(g.id); !helper { // a helper runs only when asked (TriggerClaimed)
			g.m.activate(g.id)
		}
	case *actor.Stopping:
		if g.id == "" {
			return
		}
		if pid, ok := g.m.grains.Load(g.id); ok && pid.(*actor.PID).Id == ctx.Self().Id {
			g.m.grains.Delete(g.id)
		}
		g.m.deactivate(g.id)
	}
}

// activate runs the named pass here, once the runtime is attached.
func (m *Member) activate(name string) {
	rt := m.rt.Load()
	if rt == nil {
		return // the reconciler activates it once the runtime runs
	}
	ctx, cancel := context.WithTimeout(context.Background(), activationTimeout)
	defer cancel()
	if err := rt.Activate(ctx, name); err != nil && !stopping(err) {
		m.o.Logger.WithError(err).WithField("pass", name).Warn("cluster: pass not activated")
	}
}

// deactivate stops the named pass here, letting its in-flight batch finish.
func (m *Member) deactivate(name string) {
	rt := m.rt.Load()
	if rt == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), m.o.LeaveGrace)
	defer cancel()
	if err := rt.Deactivate(ctx, name); err != nil && !stopping(err) {
		m.o.Logger.WithError(err).WithField("pass", name).Warn("cluster: pass not deactivated")
	}
}

// stopping reports an error that only says the runtime is stopping or stopped, which a
// placement call meets during shutdown and need not log.
func stopping(err error) bool {
	return errors.Is(err, actors.ErrNotRunning)
}
