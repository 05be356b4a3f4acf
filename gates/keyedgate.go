package gates

import (
	"context"
	"sync"
)

// KeyedGate lets callers of the same key in one at a time, in the order they asked, and
// never makes callers of different keys wait for each other. It keeps an entry for a key
// only while somebody holds or waits for it, so a gate that served any number of keys
// tracks none once idle. It is a Queue of one place per key behind a mutex, parking each
// waiting caller until its grant.
//
// Keys are compared with ==. A caller whose keys compare more loosely (file paths, names
// without case) normalises them before calling Enter. The zero value is not usable: use
// NewKeyedGate. A KeyedGate is safe for concurrent use.
type KeyedGate[K comparable] struct {
	mu sync.Mutex
	q  *Queue[K, *queued]
}

// NewKeyedGate returns an empty gate.
func NewKeyedGate[K comparable]() *KeyedGate[K] {
	return &KeyedGate[K]{q: NewQueue[K, *queued](1)}
}

// Enter waits until the caller is the only holder of key and returns the ticket that
// holds it. It fails with ctx's error, holding nothing, when ctx has already ended or
// ends while the caller waits. See the package doc for a grant that races a cancellation.
func (g *KeyedGate[K]) Enter(ctx context.Context, key K) (*Ticket, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	t := &Ticket{owner: g}
	g.mu.Lock()
	if g.q.Enqueue(key, (*queued)(t)) {
		g.mu.Unlock()
		return t, nil
	}
	t.ready = make(chan struct{})
	g.mu.Unlock()
	return await(ctx, &g.mu, t, g.q.Cancel)
}

func (g *KeyedGate[K]) release(t *Ticket) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if next, ok := g.q.Release((*queued)(t)); ok {
		next.grant()
	}
}

// TrackedKeys returns how many keys are held or waited for now. It is zero whenever the
// gate is idle, however many keys it served and however many waits were cancelled.
func (g *KeyedGate[K]) TrackedKeys() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.q.Keys()
}

// waiting returns how many callers queue for key; tests use it to order arrivals.
func (g *KeyedGate[K]) waiting(key K) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.q.Waiting(key)
}
