package actors

import (
	"fmt"

	"github.com/asynkron/protoactor-go/actor"
)

// groupActor supervises a set of pass actors with one strategy: every one-for-one pass
// under the runtime's main group, each all-for-one group under a group of its own. It
// spawns its children when it starts and then only relays supervision.
type groupActor struct {
	cells []*passCell
	d     *deps
	rt    *Runtime
	ready chan struct{}
}

// revivePass asks a group for a new actor for a pass supervision stopped.
type revivePass struct {
	cell *passCell
	done chan<- struct{}
}

func (g *groupActor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		g.spawnAll(ctx)
	case *revivePass:
		m.cell.revived()
		pid := ctx.SpawnPrefix(newPassProps(m.cell, g.d), "pass-revived")
		m.cell.pid.Store(pid)
		g.rt.byPID.Store(pid.Id, m.cell)
		close(m.done)
	case *activatePass:
		g.spawnPlaced(ctx, m)
	}
}

func (g *groupActor) spawnAll(ctx actor.Context) {
	for i, c := range g.cells {
		if g.rt.cfg.Placed {
			break // placed passes start on Activate
		}
		pid, err := ctx.SpawnNamed(newPassProps(c, g.d), fmt.Sprintf("pass-%d", i))
		if err != nil {
			panic(fmt.Errorf("spawn pass %q: %w", c.reg.Name, err))
		}
		c.pid.Store(pid)
		g.rt.byPID.Store(pid.Id, c)
	}
	if g.ready != nil {
		close(g.ready)
		g.ready = nil
	}
}
