package gates

import (
	"container/list"
	"context"
	"sync"
)

// queue is a fixed number of places handed out in strict arrival order. It does no
// locking: its owner guards it with a mutex and passes that mutex to await.
//
// Invariant: waiters exist only while every place is held, because a release hands its
// place straight to the first waiter instead of freeing it.
type queue struct {
	capacity int
	held     int
	waiters  list.List // of *waiter
}

type waiter struct {
	ready   chan struct{}
	granted bool
	elem    *list.Element
}

// take grants a place at once when one is free and nobody waits, and otherwise enqueues
// a waiter for await.
func (q *queue) take() (granted bool, w *waiter) {
	if q.held < q.capacity && q.waiters.Len() == 0 {
		q.held++
		return true, nil
	}
	w = &waiter{ready: make(chan struct{})}
	w.elem = q.waiters.PushBack(w)
	return false, w
}

// release hands the place to the first waiter, or frees it.
func (q *queue) release() {
	if front := q.waiters.Front(); front != nil {
		w := q.waiters.Remove(front).(*waiter)
		w.granted = true
		close(w.ready)
		return
	}
	q.held--
}

// idle reports whether nobody holds or waits for a place.
func (q *queue) idle() bool { return q.held == 0 && q.waiters.Len() == 0 }

// await blocks until w is granted or ctx ends. mu must be the mutex that guards q, not
// held by the caller. A grant that raced with the cancellation stands. A cancelled waiter
// is never the last user of q: by the invariant someone still holds its place, and that
// holder's release is what lets the owner drop an idle entry.
func (q *queue) await(ctx context.Context, mu *sync.Mutex, w *waiter) error {
	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
	}
	mu.Lock()
	defer mu.Unlock()
	if w.granted {
		return nil
	}
	q.waiters.Remove(w.elem)
	return ctx.Err()
}
