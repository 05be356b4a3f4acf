package actors

import "github.com/asynkron/protoactor-go/actor"

// The pass actor's side of admission: before each batch it asks the gate (one batch per
// target) and its database's slot pool, and it gives back what it holds or waits for.

func (a *passActor) requestAdmission(ctx actor.Context) {
	a.req, a.yield = a.cell.requests.Add(1), false
	ctx.Send(a.d.gate, &acquire{Key: a.cell.reg.TargetKey(), Req: a.req, From: ctx.Self(), Then: a.pool()})
}

func (a *passActor) pool() *actor.PID { return a.d.pools[a.cell.reg.DatabaseName()] }

func (a *passActor) onGranted(ctx actor.Context, m *SlotGranted) {
	if m.Req != a.req || a.sweep == nil || a.inflight != nil {
		a.releaseRequest(ctx, m.Req) // a grant for a request this incarnation gave up
		return
	}
	a.runBatch(ctx) // the gate forwarded the request to the pool itself
}

// releaseRequest gives back whatever req holds or waits for, at both actors.
func (a *passActor) releaseRequest(ctx actor.Context, req uint64) {
	if req == 0 {
		return
	}
	ctx.Send(a.pool(), &ReleaseSlot{Req: req, From: ctx.Self()})
	ctx.Send(a.d.gate, &release{Req: req, From: ctx.Self()})
}

func (a *passActor) releaseAdmission(ctx actor.Context) {
	a.releaseRequest(ctx, a.req)
	a.req, a.yield = 0, false
}
