package actors

import (
	"fmt"
	"sync/atomic"

	"github.com/asynkron/protoactor-go/actor"
)

// AdmissionPool is a database's bound on concurrent deletes as the runtime sees it: an actor
// that speaks the slot protocol below, and its numbers for Status. The pass actor knows
// a pool only as the PID of that actor, so any pool that keeps the protocol can stand
// behind it: the in-process one (NewLocalSlotPool), or one whose slots live elsewhere,
// such as advisory locks shared by every node of a cluster. It is named apart from
// gates.SlotPool, which bounds goroutines rather than actors, so that a reader of either
// package never has to ask which of the two is meant.
//
// The protocol, all local messages between actors of one system:
//
//   - AcquireSlot{Req, From} asks for a slot on behalf of From. The pool answers From
//     with SlotGranted{Req} once Req holds a slot. The gate actor sends it, forwarding a
//     request it has just let through.
//   - ReleaseSlot{Req, From} gives back whatever Req holds or waits for. Releasing a
//     request that holds nothing (unknown, given up, released before) must do nothing,
//     so a requester can release without knowing whether its grant is on the way.
//   - YieldSlot{Req} asks the holder of Req to release at its next batch boundary,
//     because someone waits. A pass running back-to-back batches keeps its slot between
//     them until it hears this; a pool that cannot tell whether anyone waits sends it
//     with every grant, and the pass then releases after each batch.
//   - A pool watches every From and gives back what a requester held or waited for when
//     it stops. A grant for a request the requester gave up is released by the requester.
type AdmissionPool interface {
	// Props returns the Props of the pool's actor. The runtime spawns it once, at Start.
	Props() *actor.Props
	// Status returns the slots in use and the capacity, for Runtime.Status. It is called
	// from any goroutine.
	Status() SlotStatus
}

// AcquireSlot asks a slot pool for a slot for request Req of From. Req is unique per
// request across every incarnation of the requester, so a late grant can be recognised.
type AcquireSlot struct {
	Req  uint64
	From *actor.PID
}

// ReleaseSlot gives back the slot request Req of From holds, or takes it out of the
// pool's queue; for a request holding nothing it does nothing.
type ReleaseSlot struct {
	Req  uint64
	From *actor.PID
}

// SlotGranted tells a requester that its request Req holds a slot now.
type SlotGranted struct {
	Req uint64
}

// YieldSlot asks the holder of request Req to give its places back at its next batch
// boundary, because someone waits for them. The slot pool sends it, and so does the gate
// actor when another pass waits for the holder's target.
type YieldSlot struct {
	Req uint64
}

// NewLocalSlotPool returns the in-process pool of capacity slots, granted strictly in
// arrival order by a gates.Queue its actor owns: the runtime's pool for each database
// unless Config.SlotPools gives another. It panics when capacity is below 1, which is a
// programming error (the runtime refuses such limits before it builds a pool).
func NewLocalSlotPool(capacity int) AdmissionPool {
	if capacity < 1 {
		panic(fmt.Sprintf("actors: slot pool capacity must be at least 1, got %d", capacity))
	}
	return &localSlotPool{capacity: capacity}
}

type localSlotPool struct {
	capacity int
	inUse    atomic.Int64
}

func (p *localSlotPool) Props() *actor.Props {
	return actor.PropsFromProducer(func() actor.Actor {
		return &slotPoolActor{admission: newAdmission(p.capacity, grantSlot), inUse: &p.inUse}
	})
}

func (p *localSlotPool) Status() SlotStatus {
	return SlotStatus{InUse: int(p.inUse.Load()), Capacity: p.capacity}
}
