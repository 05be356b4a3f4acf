package gates

import (
	"context"
	"sync"
	"sync/atomic"
)

// Ticket is a held place in a gate or a pool. Release gives it back exactly once: a
// second call does nothing, so a ticket released on two code paths can never free a
// place another caller now holds.
type Ticket struct {
	released atomic.Bool
	owner    releaser
	ready    chan struct{} // closed when a queued ticket is granted; nil if granted at once
	entry    Entry
}

// queued is a Ticket as the Queue of its gate or pool sees it: a Request, without giving
// Ticket itself a QueueEntry method.
type queued Ticket

func (q *queued) QueueEntry() *Entry { return &q.entry }

// releaser is the gate or pool a ticket came from.
type releaser interface{ release(*Ticket) }

// Release gives the place back. Calls after the first do nothing, and so does a call on
// a nil ticket.
func (t *Ticket) Release() {
	if t == nil {
		return
	}
	if t.released.CompareAndSwap(false, true) {
		t.owner.release(t)
	}
}

// grant wakes a ticket that waited; mu, the owner's mutex, is held.
func (q *queued) grant() { close(q.ready) }

// await blocks until the queued ticket t is granted or ctx ends. mu guards the queue and
// is not held by the caller; cancel takes t out of the queue under mu and reports false
// when t was granted first, in which case the grant stands and t is returned.
func await(ctx context.Context, mu *sync.Mutex, t *Ticket, cancel func(*queued) bool) (*Ticket, error) {
	select {
	case <-t.ready:
		return t, nil
	case <-ctx.Done():
	}
	mu.Lock()
	defer mu.Unlock()
	if !cancel((*queued)(t)) {
		return t, nil
	}
	return nil, ctx.Err()
}
