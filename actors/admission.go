package actors

import (
	"sync/atomic"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/retentionkit/retention/gates"
)

// The admission pair keeps deletes from piling onto a database. Before every batch a
// pass actor asks the gate actor for its target (one batch per table at a time, in
// arrival order); once granted, the gate asks the slot pool of the pass's database on
// its behalf (at most N deletes at once, in arrival order), which tells the pass. The
// pass releases both when the batch is done, except that a pass running back-to-back
// batches (no BatchDelay) keeps them for its next batch until someone waits: then the
// actor holding the contended place asks it to yield, and it releases at the end of the
// batch it is running, exactly where it would have released anyway. Uncontended, a
// batch costs no admission round trip; contended, the order is the same as asking every
// time. Asking the gate first means a pass queued behind another on the same table never
// sits on a slot it cannot use.
//
// Both actors own a gates.Queue, which holds every admission rule (arrival order,
// hand-over, a cancelled waiter holds nothing, a second release is a no-op, who to ask to
// yield). What is left here is actor work: watching requesters, so one that stops gives
// its places back; sending grants and requests to yield; and routing the gate's grant to
// the pool. A restarted pass keeps its PID, so it releases what its old incarnation held
// itself, and drops any grant addressed to an old request.

// acquire asks the gate actor for Key. Req is unique per request across every
// incarnation of the requesting pass (not across passes: a request is named by From and
// Req together), so a late grant can be recognised.
type acquire struct {
	Key  string
	Req  uint64
	From *actor.PID
	// Then is the slot pool the gate asks next on the requester's behalf once it grants,
	// saving the requester a round trip on every batch.
	Then *actor.PID
}

// release gives back the gate place held or waited for under Req by From; releasing an
// unknown request does nothing, so a requester can release without knowing whether it
// was granted.
type release struct {
	Req  uint64
	From *actor.PID
}

// request is one open request at an admission actor, as its queue holds it.
type request[K comparable] struct {
	gates.Entry
	key  K
	req  uint64
	from *actor.PID
	then *actor.PID
}

// QueueEntry lets the queue keep r's standing in r itself.
func (r *request[K]) QueueEntry() *gates.Entry { return &r.Entry }

// slotKey is the one key of a slot pool's queue: every request waits in the same line.
type slotKey struct{}

// admission is what both admission actors share: the queue, the requesters watched, and
// how the actor tells a request it holds a place.
type admission[K comparable] struct {
	queue    *gates.Queue[K, *request[K]]
	requests map[string]map[uint64]*request[K] // requester PID id -> its open requests
	grant    func(actor.Context, *request[K])
}

func newAdmission[K comparable](capacity int, grant func(actor.Context, *request[K])) admission[K] {
	return admission[K]{queue: gates.NewQueue[K, *request[K]](capacity), requests: map[string]map[uint64]*request[K]{}, grant: grant}
}

// enter queues r, watching its requester, and grants it when it holds a place at once.
// Holders that r now waits behind are asked to yield.
func (a *admission[K]) enter(ctx actor.Context, r *request[K]) {
	open := a.requests[r.from.Id]
	if _, dup := open[r.req]; dup {
		return
	}
	if open == nil {
		open = map[uint64]*request[K]{}
		a.requests[r.from.Id] = open
		ctx.Watch(r.from)
	}
	open[r.req] = r
	if a.queue.Enqueue(r.key, r) {
		a.grant(ctx, r)
	}
	a.askToYield(ctx, r.key)
}

// leave gives back whatever request req of from holds or waits for, and grants the
// request its place went to.
func (a *admission[K]) leave(ctx actor.Context, from *actor.PID, req uint64) {
	r, ok := a.requests[from.Id][req]
	if !ok {
		return
	}
	delete(a.requests[from.Id], req)
	if len(a.requests[from.Id]) == 0 {
		delete(a.requests, from.Id)
		ctx.Unwatch(from)
	}
	if next, ok := a.queue.Release(r); ok {
		a.grant(ctx, next)
	}
	a.askToYield(ctx, r.key)
}

// forget gives back everything a stopped requester held or waited for.
func (a *admission[K]) forget(ctx actor.Context, who *actor.PID) {
	for req := range a.requests[who.Id] {
		a.leave(ctx, who, req)
	}
}

func (a *admission[K]) askToYield(ctx actor.Context, key K) {
	a.queue.AskToYield(key, func(h *request[K]) { ctx.Send(h.from, &YieldSlot{Req: h.req}) })
}

// gateActor lets one batch per target through at a time and hands each request it lets
// through to the pass's slot pool.
type gateActor struct {
	admission[string]
}

func newGateProps() *actor.Props {
	return actor.PropsFromProducer(func() actor.Actor { return &gateActor{admission: newAdmission(1, forwardToPool)} })
}

// forwardToPool routes the gate's grant to the requester's slot pool.
func forwardToPool(ctx actor.Context, r *request[string]) {
	ctx.Send(r.then, &AcquireSlot{Req: r.req, From: r.from})
}

func (a *gateActor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *acquire:
		a.enter(ctx, &request[string]{key: m.Key, req: m.Req, from: m.From, then: m.Then})
	case *release:
		a.leave(ctx, m.From, m.Req)
	case *actor.Terminated:
		a.forget(ctx, m.Who)
	}
}

// slotPoolActor is the local AdmissionPool's actor: capacity slots, one line.
type slotPoolActor struct {
	admission[slotKey]
	inUse *atomic.Int64 // slots held, for Status
}

// grantSlot tells the requester its request holds a slot.
func grantSlot(ctx actor.Context, r *request[slotKey]) {
	ctx.Send(r.from, &SlotGranted{Req: r.req})
}

func (a *slotPoolActor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *AcquireSlot:
		a.enter(ctx, &request[slotKey]{req: m.Req, from: m.From})
	case *ReleaseSlot:
		a.leave(ctx, m.From, m.Req)
	case *actor.Terminated:
		a.forget(ctx, m.Who)
	default:
		return
	}
	a.inUse.Store(int64(a.queue.Held(slotKey{})))
}
