package gates

import (
	"context"
	"sync"
)

// KeyedGate lets callers of the same key in one at a time, in the order they asked, and
// never makes callers of different keys wait for each other. It keeps an entry for a key
// only while somebody holds or waits for it, so a gate that served any number of keys
// tracks none once idle.
//
// Keys are compared with ==. A caller whose keys compare more loosely (file paths, names
// without case) normalises them before calling Enter. The zero value is not usable: use
// NewKeyedGate. A KeyedGate is safe for concurrent use.
type KeyedGate[K comparable] struct {
	mu   sync.Mutex
	keys map[K]*queue
}

// NewKeyedGate returns an empty gate.
func NewKeyedGate[K comparable]() *KeyedGate[K] {
	return &KeyedGate[K]{keys: make(map[K]*queue)}
}

// Enter waits until the caller is the only holder of key and returns the ticket that
// holds it. It fails with ctx's error, holding nothing, when ctx has already ended or
// ends while the caller waits. See the package doc for a grant that races a cancellation.
func (g *KeyedGate[K]) Enter(ctx context.Context, key K) (*Ticket, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	g.mu.Lock()
	q, ok := g.keys[key]
	if !ok {
		q = &queue{capacity: 1}
		g.keys[key] = q
	}
	granted, w := q.take()
	g.mu.Unlock()
	if !granted {
		if err := q.await(ctx, &g.mu, w); err != nil {
			return nil, err
		}
	}
	return newTicket(func() { g.release(key, q) }), nil
}

func (g *KeyedGate[K]) release(key K, q *queue) {
	g.mu.Lock()
	defer g.mu.Unlock()
	q.release()
	if q.idle() {
		delete(g.keys, key)
	}
}

// TrackedKeys returns how many keys are held or waited for now. It is zero whenever the
// gate is idle, however many keys it served and however many waits were cancelled.
func (g *KeyedGate[K]) TrackedKeys() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.keys)
}

// waiting returns how many callers queue for key; tests use it to order arrivals.
func (g *KeyedGate[K]) waiting(key K) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	if q, ok := g.keys[key]; ok {
		return q.waiters.Len()
	}
	return 0
}
