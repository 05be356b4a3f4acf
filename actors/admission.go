package actors

import (
	"sync/atomic"

	"github.com/asynkron/protoactor-go/actor"
)

// The admission pair keeps deletes from piling onto a database. Before every batch a
// pass actor asks the gate actor for its target (one batch per table at a time, in
// arrival order); once granted, the gate asks the slot-pool actor of the pass's database
// on its behalf (at most N deletes at once, in arrival order), which tells the pass. The
// pass releases both when the batch is done, except that a pass running back-to-back
// batches (no BatchDelay) keeps them for its next batch until someone waits: then the
// actor holding the contended queue asks it to yield, and it releases at the end of the
// batch it is running, exactly where it would have released anyway. Uncontended, a batch
// costs no admission round trip; contended, the order is the same as asking every time. Both are the same
// first-come, first-served queue: the gate keeps one queue of one place per key, the
// pool one queue of N places. Asking the gate first means a pass queued behind another
// on the same table never sits on a slot it cannot use.
//
// A requester that stops while it holds or waits gives its places back: the actors watch
// every requester. A restarted pass keeps its PID, so it releases what its old
// incarnation held itself, and drops any grant addressed to an old request.

// admissionStage tells the gate's grants from the pool's.
type admissionStage int

const (
	gateStage admissionStage = iota
	slotStage
)

// acquire asks for a place. Req is unique per request across every incarnation of the
// requesting pass (not across passes: a request is named by From and Req together), so a
// late grant can be recognised.
type acquire struct {
	Key  string
	Req  uint64
	From *actor.PID
	// Then, when set, is asked next on the requester's behalf once this actor grants:
	// the gate passes a granted request straight to the slot pool, saving the requester
	// a round trip on every batch.
	Then *actor.PID
}

// release gives back a place held or waited for under Req by From; releasing an unknown
// request does nothing, so a requester can release without knowing whether it was
// granted.
type release struct {
	Key  string
	Req  uint64
	From *actor.PID
}

// yieldPlace asks a holder to give its place back at its next batch boundary, because
// someone is waiting for it. A pass that runs back-to-back batches keeps its places
// between them only until it hears this.
type yieldPlace struct {
	Req uint64
}

// granted tells a requester that its request holds a place now.
type granted struct {
	Stage admissionStage
	Req   uint64
}

type request struct {
	req   uint64
	from  *actor.PID
	then  *actor.PID
	asked bool // told to yield already
}

type admissionQueue struct {
	holders []request
	waiters []request
}

// admissionActor is the gate actor (keyed, one place per key) or the slot-pool actor
// (one queue, capacity places).
type admissionActor struct {
	stage    admissionStage
	keyed    bool
	capacity int
	queues   map[string]*admissionQueue
	watched  map[string]int // requester PID id -> requests held or queued
	inUse    *atomic.Int64  // places held, for status; may be nil
}

func newGateProps() *actor.Props {
	return actor.PropsFromProducer(func() actor.Actor {
		return &admissionActor{stage: gateStage, keyed: true, capacity: 1, queues: map[string]*admissionQueue{}, watched: map[string]int{}}
	})
}

func newPoolProps(capacity int, inUse *atomic.Int64) *actor.Props {
	return actor.PropsFromProducer(func() actor.Actor {
		return &admissionActor{stage: slotStage, capacity: capacity, queues: map[string]*admissionQueue{}, watched: map[string]int{}, inUse: inUse}
	})
}

func (a *admissionActor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *acquire:
		a.acquire(ctx, m)
	case *release:
		a.release(ctx, a.key(m.Key), func(r request) bool { return r.req == m.Req && r.from.Id == m.From.Id })
	case *actor.Terminated:
		a.forget(ctx, m.Who)
	}
}

func (a *admissionActor) key(k string) string {
	if a.keyed {
		return k
	}
	return ""
}

func (a *admissionActor) acquire(ctx actor.Context, m *acquire) {
	key := a.key(m.Key)
	q, ok := a.queues[key]
	if !ok {
		q = &admissionQueue{}
		a.queues[key] = q
	}
	r := request{req: m.Req, from: m.From, then: m.Then}
	if a.watched[m.From.Id] == 0 {
		ctx.Watch(m.From)
	}
	a.watched[m.From.Id]++
	if len(q.holders) < a.capacity && len(q.waiters) == 0 {
		a.grant(ctx, q, r)
		return
	}
	q.waiters = append(q.waiters, r)
	a.askToYield(ctx, q)
}

// askToYield tells every holder of a queue that has waiters to give its place back at
// its next batch boundary.
func (a *admissionActor) askToYield(ctx actor.Context, q *admissionQueue) {
	if len(q.waiters) == 0 {
		return
	}
	for i := range q.holders {
		if h := &q.holders[i]; !h.asked {
			h.asked = true
			ctx.Send(h.from, &yieldPlace{Req: h.req})
		}
	}
}

func (a *admissionActor) grant(ctx actor.Context, q *admissionQueue, r request) {
	q.holders = append(q.holders, r)
	a.count(1)
	if r.then != nil {
		ctx.Send(r.then, &acquire{Req: r.req, From: r.from})
		return
	}
	ctx.Send(r.from, &granted{Stage: a.stage, Req: r.req})
}

// release drops the requests of key that match, held or queued, and hands freed places
// to the first waiters.
func (a *admissionActor) release(ctx actor.Context, key string, match func(request) bool) {
	q, ok := a.queues[key]
	if !ok {
		return
	}
	var gone []request
	keep := func(rs []request) []request {
		out := rs[:0]
		for _, r := range rs {
			if match(r) {
				gone = append(gone, r)
			} else {
				out = append(out, r)
			}
		}
		return out
	}
	held := len(q.holders)
	q.holders = keep(q.holders)
	a.count(len(q.holders) - held)
	q.waiters = keep(q.waiters)
	for _, r := range gone {
		a.unwatch(ctx, r.from)
	}
	for len(q.holders) < a.capacity && len(q.waiters) > 0 {
		next := q.waiters[0]
		q.waiters = q.waiters[1:]
		a.grant(ctx, q, next)
	}
	a.askToYield(ctx, q)
	if len(q.holders) == 0 && len(q.waiters) == 0 {
		delete(a.queues, key)
	}
}

// forget releases everything a stopped requester held or waited for.
func (a *admissionActor) forget(ctx actor.Context, who *actor.PID) {
	if a.watched[who.Id] == 0 {
		return
	}
	for key := range a.queues {
		a.release(ctx, key, func(r request) bool { return r.from.Id == who.Id })
	}
}

func (a *admissionActor) unwatch(ctx actor.Context, who *actor.PID) {
	a.watched[who.Id]--
	if a.watched[who.Id] <= 0 {
		delete(a.watched, who.Id)
		ctx.Unwatch(who)
	}
}

func (a *admissionActor) count(delta int) {
	if a.inUse != nil {
		a.inUse.Add(int64(delta))
	}
}
