package gates

import (
	"context"
	"sync"
)

// SlotPool is a fixed number of slots, handed out strictly in the order callers asked.
// Unlike a plain semaphore it promises that order, reports how many slots are free, and
// makes a double release harmless. It is a Queue with one key behind a mutex, parking
// each waiting caller until its grant. It is safe for concurrent use.
type SlotPool struct {
	mu sync.Mutex
	q  *Queue[struct{}, *queued]
}

// NewSlotPool returns a pool of capacity slots. It panics when capacity is below 1,
// which is a programming error: such a pool could admit nobody.
func NewSlotPool(capacity int) *SlotPool {
	return &SlotPool{q: NewQueue[struct{}, *queued](capacity)}
}

// Enter waits for a free slot and returns the ticket that holds it. It fails with ctx's
// error, holding nothing, when ctx has already ended (even with a slot free) or ends
// while the caller waits. See the package doc for a grant that races a cancellation.
func (p *SlotPool) Enter(ctx context.Context) (*Ticket, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	t := &Ticket{owner: p}
	p.mu.Lock()
	if p.q.Enqueue(struct{}{}, (*queued)(t)) {
		p.mu.Unlock()
		return t, nil
	}
	t.ready = make(chan struct{})
	p.mu.Unlock()
	return await(ctx, &p.mu, t, p.q.Cancel)
}

func (p *SlotPool) release(t *Ticket) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if next, ok := p.q.Release((*queued)(t)); ok {
		next.grant()
	}
}

// Capacity returns the number of slots.
func (p *SlotPool) Capacity() int { return p.q.Capacity() }

// Available returns how many slots are free now.
func (p *SlotPool) Available() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.q.Capacity() - p.q.Held(struct{}{})
}

// Waiting returns how many callers are queued for a slot now.
func (p *SlotPool) Waiting() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.q.Waiting(struct{}{})
}
