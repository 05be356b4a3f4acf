package gates

import (
	"context"
	"fmt"
	"sync"
)

// SlotPool is a fixed number of slots, handed out strictly in the order callers asked.
// Unlike a plain semaphore it promises that order, reports how many slots are free, and
// makes a double release harmless. It is safe for concurrent use.
type SlotPool struct {
	mu sync.Mutex
	q  queue
}

// NewSlotPool returns a pool of capacity slots. It panics when capacity is below 1,
// which is a programming error: such a pool could admit nobody.
func NewSlotPool(capacity int) *SlotPool {
	if capacity < 1 {
		panic(fmt.Sprintf("gates: slot pool capacity must be at least 1, got %d", capacity))
	}
	return &SlotPool{q: queue{capacity: capacity}}
}

// Enter waits for a free slot and returns the ticket that holds it. It fails with ctx's
// error, holding nothing, when ctx has already ended (even with a slot free) or ends
// while the caller waits. See the package doc for a grant that races a cancellation.
func (p *SlotPool) Enter(ctx context.Context) (*Ticket, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p.mu.Lock()
	granted, w := p.q.take()
	p.mu.Unlock()
	if !granted {
		if err := p.q.await(ctx, &p.mu, w); err != nil {
			return nil, err
		}
	}
	return newTicket(p.release), nil
}

func (p *SlotPool) release() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.q.release()
}

// Capacity returns the number of slots.
func (p *SlotPool) Capacity() int { return p.q.capacity }

// Available returns how many slots are free now.
func (p *SlotPool) Available() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.q.capacity - p.q.held
}

// Waiting returns how many callers are queued for a slot now.
func (p *SlotPool) Waiting() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.q.waiters.Len()
}
