package actors

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/retentionkit/retention/gates"
)

// SlotSource is where an advisory slot pool's slots live: a store shared by every member
// of a cluster, such as passes.AdvisorySlots (PostgreSQL advisory locks). AcquireSlot
// blocks until one of capacity slots is held, in the order the store's requesters asked,
// and returns early with ctx's error, holding nothing, when ctx ends; Close on the
// result gives the slot back. SlotsWaiting says how many requesters, on any member, wait
// for a slot now.
type SlotSource interface {
	AcquireSlot(ctx context.Context, capacity int) (io.Closer, error)
	SlotsWaiting(ctx context.Context) (int, error)
}

// The defaults of AdvisorySlotPoolOptions.
const (
	DefaultWaiterPoll    = 250 * time.Millisecond
	DefaultAcquireRetry  = time.Second
	advisoryQueryTimeout = 10 * time.Second
)

// AdvisorySlotPoolOptions tune an advisory slot pool. The zero value takes the
// defaults.
type AdvisorySlotPoolOptions struct {
	// WaiterPoll is how often the pool asks the source whether a requester of another
	// member waits, while this member holds slots and has no waiter of its own; when one
	// does, holders are asked to yield at their next batch boundary. Until then a pass
	// keeps its slot across back-to-back batches, as with the local pool. Default 250ms.
	WaiterPoll time.Duration
	// AcquireRetry is the pause before asking the source again after it failed (the
	// database unreachable, say): the request stays first in line. Default 1s.
	AcquireRetry time.Duration
}

// NewAdvisorySlotPool returns a AdmissionPool whose capacity slots live in source, shared by
// every member of a cluster: the cluster-wide limit on concurrent deletes of one
// database. It panics when capacity is below 1, a programming error.
func NewAdvisorySlotPool(source SlotSource, capacity int) AdmissionPool {
	return NewAdvisorySlotPoolWith(source, capacity, AdvisorySlotPoolOptions{})
}

// NewAdvisorySlotPoolWith is NewAdvisorySlotPool with options.
//
// The pool keeps the slot protocol (see AdmissionPool) over a source whose acquisitions
// block: its actor queues requests in arrival order and lets one at a time, the head,
// wait in the source's line, on a goroutine of its own that reports back by message, so
// the mailbox never waits on the database. One waiter per member keeps a member with
// many passes from holding a connection per waiting pass; across members the source
// serves the heads in the order they asked. A request given up, or whose requester
// stopped, is cancelled where it waits, and a grant that arrives for it is given back.
//
// Status reports this member's slots in use, read without a query (the cluster-wide
// figure is the source's to read: passes.AdvisorySlots.SlotsInUse).
func NewAdvisorySlotPoolWith(source SlotSource, capacity int, o AdvisorySlotPoolOptions) AdmissionPool {
	if capacity < 1 {
		panic(fmt.Sprintf("actors: slot pool capacity must be at least 1, got %d", capacity))
	}
	if o.WaiterPoll <= 0 {
		o.WaiterPoll = DefaultWaiterPoll
	}
	if o.AcquireRetry <= 0 {
		o.AcquireRetry = DefaultAcquireRetry
	}
	return &advisorySlotPool{source: source, capacity: capacity, opts: o}
}

type advisorySlotPool struct {
	source   SlotSource
	capacity int
	opts     AdvisorySlotPoolOptions
	inUse    atomic.Int64
}

func (p *advisorySlotPool) Props() *actor.Props {
	return actor.PropsFromProducer(func() actor.Actor {
		return &advisoryPoolActor{pool: p, open: map[string]map[uint64]*slotRequest{}, line: newSourceLine()}
	})
}

func (p *advisorySlotPool) Status() SlotStatus {
	return SlotStatus{InUse: int(p.inUse.Load()), Capacity: p.capacity}
}

// slotRequest is one open request at an advisory pool.
type slotRequest struct {
	from   *actor.PID
	req    uint64
	slot   io.Closer          // held: the slot
	cancel context.CancelFunc // the head: stops its wait
	asked  bool               // asked to yield since its grant
	entry  gates.Entry        // its place in the pool's line
}

// QueueEntry gives the line (a gates.Queue) the entry it keeps in the request.
func (r *slotRequest) QueueEntry() *gates.Entry { return &r.entry }

// atSource is the line's one key: the line has a single place, waiting at the source.
type atSource struct{}

// Messages the pool's goroutines send its actor.
type (
	slotAcquired struct {
		r    *slotRequest
		slot io.Closer
		err  error
	}
	retryHead     struct{ r *slotRequest }
	pollWaiters   struct{ gen uint64 }
	waitersPolled struct {
		gen uint64
		n   int
	}
)

// advisoryPoolActor is an advisory pool's actor.
type advisoryPoolActor struct {
	pool *advisorySlotPool
	open map[string]map[uint64]*slotRequest // requester PID id -> its open requests
	// line orders this member's requests for the source: its one place is the head,
	// the request waiting at the source; the others wait behind it in arrival order.
	// It is the gates queue, so the admission rules stay written once.
	line    *gates.Queue[atSource, *slotRequest]
	holders []*slotRequest // in grant order
	pollGen uint64         // the waiter poll in flight; 0 when none
}

// newSourceLine is an empty line with one place at the source: one waiter per member
// keeps a member with many passes from holding a connection per waiting pass.
func newSourceLine() *gates.Queue[atSource, *slotRequest] {
	return gates.NewQueue[atSource, *slotRequest](1)
}

func (a *advisoryPoolActor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *AcquireSlot:
		a.enter(ctx, m.From, m.Req)
	case *ReleaseSlot:
		a.leave(ctx, m.From, m.Req)
	case *actor.Terminated:
		for req := range a.open[m.Who.Id] {
			a.leave(ctx, m.Who, req)
		}
	case *slotAcquired:
		a.acquired(ctx, m)
	case *retryHead:
		if a.line.Holds(m.r) {
			a.startHead(ctx, m.r)
		}
	case *pollWaiters:
		a.pollNow(ctx, m.gen)
	case *waitersPolled:
		a.polled(ctx, m)
	case *actor.Stopping:
		a.stopAll()
	}
	a.pool.inUse.Store(int64(len(a.holders)))
}

func (a *advisoryPoolActor) enter(ctx actor.Context, from *actor.PID, req uint64) {
	reqs := a.open[from.Id]
	if _, dup := reqs[req]; dup {
		return
	}
	if reqs == nil {
		reqs = map[uint64]*slotRequest{}
		a.open[from.Id] = reqs
		ctx.Watch(from)
	}
	r := &slotRequest{from: from, req: req}
	reqs[req] = r
	if a.line.Enqueue(atSource{}, r) {
		a.startHead(ctx, r)
	}
	a.askToYield(ctx, len(a.holders)) // r waits, here
}

// passHead lets r, the head, out of the line and sends the next request to the source.
func (a *advisoryPoolActor) passHead(ctx actor.Context, r *slotRequest) {
	if next, ok := a.line.Release(r); ok {
		a.startHead(ctx, next)
	}
}

// startHead waits for a slot for r on a goroutine, which reports back.
func (a *advisoryPoolActor) startHead(ctx actor.Context, r *slotRequest) {
	wctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	self, root, source, capacity := ctx.Self(), ctx.ActorSystem().Root, a.pool.source, a.pool.capacity
	go func() {
		slot, err := source.AcquireSlot(wctx, capacity)
		if wctx.Err() != nil && slot != nil {
			// Given up (released, or the pool stopped) as the slot came: give it back here,
			// since a stopped pool would never read the message.
			_ = slot.Close()
			slot, err = nil, wctx.Err()
		}
		root.Send(self, &slotAcquired{r: r, slot: slot, err: err})
	}()
}

func (a *advisoryPoolActor) acquired(ctx actor.Context, m *slotAcquired) {
	r := m.r
	if !a.line.Holds(r) {
		giveBack(m.slot) // its request was released while it waited
		return
	}
	if m.err != nil {
		// The source failed: the request stays first and asks again after a pause.
		r.cancel()
		self, root := ctx.Self(), ctx.ActorSystem().Root
		time.AfterFunc(a.pool.opts.AcquireRetry, func() { root.Send(self, &retryHead{r: r}) })
		return
	}
	r.cancel, r.slot = nil, m.slot
	a.holders = append(a.holders, r)
	a.pool.inUse.Store(int64(len(a.holders))) // before the grant, so Status never lags it
	ctx.Send(r.from, &SlotGranted{Req: r.req})
	a.passHead(ctx, r)
	if a.waitingHere() {
		a.askToYield(ctx, len(a.holders))
	}
	a.armPoll(ctx)
}

func (a *advisoryPoolActor) leave(ctx actor.Context, from *actor.PID, req uint64) {
	r, ok := a.open[from.Id][req]
	if !ok {
		return
	}
	delete(a.open[from.Id], req)
	if len(a.open[from.Id]) == 0 {
		delete(a.open, from.Id)
		ctx.Unwatch(from)
	}
	switch {
	case a.line.Holds(r):
		r.cancel()
		a.passHead(ctx, r)
	case r.slot != nil:
		a.holders = slices.DeleteFunc(a.holders, func(h *slotRequest) bool { return h == r })
		giveBack(r.slot)
	default:
		a.line.Cancel(r)
	}
}

// waitingHere reports whether a request of this member waits for a slot.
func (a *advisoryPoolActor) waitingHere() bool {
	return a.line.Held(atSource{}) > 0 || a.line.Waiting(atSource{}) > 0
}

// askToYield asks up to n holders not yet asked since their grant, oldest first, to give
// their slot back at their next batch boundary, because someone waits: a request of
// this member (then every holder is asked, as the local pool does), or requests of
// other members that a poll counted (then one holder per waiter).
func (a *advisoryPoolActor) askToYield(ctx actor.Context, n int) {
	for _, h := range a.holders {
		if n == 0 {
			return
		}
		if !h.asked {
			h.asked = true
			ctx.Send(h.from, &YieldSlot{Req: h.req})
			n--
		}
	}
}

// armPoll starts the waiter poll when this member holds slots nobody of its own waits
// for, so another member's waiter is noticed.
func (a *advisoryPoolActor) armPoll(ctx actor.Context) {
	if a.pollGen != 0 || len(a.holders) == 0 || a.waitingHere() {
		return
	}
	a.pollGen++
	gen := a.pollGen
	self, root := ctx.Self(), ctx.ActorSystem().Root
	time.AfterFunc(a.pool.opts.WaiterPoll, func() { root.Send(self, &pollWaiters{gen: gen}) })
}

func (a *advisoryPoolActor) pollNow(ctx actor.Context, gen uint64) {
	if gen != a.pollGen {
		return
	}
	self, root, source := ctx.Self(), ctx.ActorSystem().Root, a.pool.source
	go func() {
		qctx, cancel := context.WithTimeout(context.Background(), advisoryQueryTimeout)
		defer cancel()
		n, err := source.SlotsWaiting(qctx)
		if err != nil {
			n = 0 // unknown: holders keep their slots until the next poll reads it
		}
		root.Send(self, &waitersPolled{gen: gen, n: n})
	}()
}

func (a *advisoryPoolActor) polled(ctx actor.Context, m *waitersPolled) {
	if m.gen != a.pollGen {
		return
	}
	a.pollGen = 0
	if m.n > 0 && !a.waitingHere() {
		a.askToYield(ctx, m.n)
	}
	a.armPoll(ctx)
}

func (a *advisoryPoolActor) stopAll() {
	for _, reqs := range a.open {
		for _, r := range reqs {
			if a.line.Holds(r) && r.cancel != nil {
				r.cancel() // the head: stop its wait at the source
			}
		}
	}
	for _, h := range a.holders {
		_ = h.slot.Close() // at stop, the mailbox may wait: the slots are back when Stop returns
	}
	a.holders, a.line = nil, newSourceLine()
}

// giveBack releases a slot off the mailbox: it is a round trip to the source.
func giveBack(slot io.Closer) {
	if slot != nil {
		go func() { _ = slot.Close() }()
	}
}
