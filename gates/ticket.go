package gates

import "sync/atomic"

// Ticket is a held place in a gate or a pool. Release gives it back exactly once: a
// second call does nothing, so a ticket released on two code paths can never free a
// place another caller now holds.
type Ticket struct {
	released atomic.Bool
	release  func()
}

func newTicket(release func()) *Ticket { return &Ticket{release: release} }

// Release gives the place back. Calls after the first do nothing, and so does a call on
// a nil ticket.
func (t *Ticket) Release() {
	if t == nil {
		return
	}
	if t.released.CompareAndSwap(false, true) {
		t.release()
	}
}
