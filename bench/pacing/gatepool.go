package main

import (
	"sync"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/retentionkit/retention/actors"
)

// gatePool is an actors.AdmissionPool with one slot that the benchmark opens and closes: a
// closed pool grants nothing, so the pass waits between two batches (holding nothing,
// outside any transaction) and the window is "not draining" while the pass actor, its
// controller and its cursor carry on as they are. It asks for the slot back with every
// grant, so a pass running back-to-back batches stops at the next batch boundary.
type gatePool struct {
	mu     sync.Mutex
	pid    *actor.PID
	system *actor.ActorSystem
	inUse  bool
}

type setOpen struct{ open bool }

func (p *gatePool) Props() *actor.Props {
	return actor.PropsFromProducer(func() actor.Actor { return &gateActor{pool: p} })
}

func (p *gatePool) Status() actors.SlotStatus {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	if p.inUse {
		n = 1
	}
	return actors.SlotStatus{InUse: n, Capacity: 1}
}

// set opens or closes the pool.
func (p *gatePool) set(open bool) {
	p.mu.Lock()
	pid, system := p.pid, p.system
	p.mu.Unlock()
	if pid != nil {
		system.Root.Send(pid, &setOpen{open})
	}
}

type gateActor struct {
	pool    *gatePool
	open    bool
	holder  uint64
	waiting []actors.AcquireSlot
}

func (g *gateActor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		g.pool.mu.Lock()
		g.pool.pid, g.pool.system = ctx.Self(), ctx.ActorSystem()
		g.pool.mu.Unlock()
	case *setOpen:
		g.open = m.open
	case *actors.AcquireSlot:
		g.waiting = append(g.waiting, *m)
	case *actors.ReleaseSlot:
		if g.holder == m.Req {
			g.holder = 0
		}
		for i, w := range g.waiting {
			if w.Req == m.Req {
				g.waiting = append(g.waiting[:i], g.waiting[i+1:]...)
				break
			}
		}
	}
	if g.open && g.holder == 0 && len(g.waiting) > 0 {
		next := g.waiting[0]
		g.waiting = g.waiting[1:]
		g.holder = next.Req
		ctx.Send(next.From, &actors.SlotGranted{Req: next.Req})
		ctx.Send(next.From, &actors.YieldSlot{Req: next.Req})
	}
	g.pool.mu.Lock()
	g.pool.inUse = g.holder != 0
	g.pool.mu.Unlock()
}
