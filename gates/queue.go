package gates

import "fmt"

// Queue is the package's admission rules written once: a fixed number of places per key,
// handed out strictly in arrival order. It never blocks and does no locking, so it has a
// single owner: KeyedGate and SlotPool guard one with a mutex and park goroutines on it,
// and an actor owns one outright and turns its answers into messages.
//
// A request is a value of the owner's type R, usually a pointer to the owner's record of
// it (a ticket; a requester and request number), that carries the Entry the queue keeps
// for it, so the queue needs no index of its own. A request is in at most one queue at a
// time. Places are per key; a queue that only ever uses one key (the zero value of K,
// say) is a plain pool of capacity places.
//
// The rules:
//   - Enqueue grants at once only when the key has a free place and nobody waits for it: a
//     newcomer queues behind the waiters even when a place has just been freed.
//   - Release hands the freed place straight to the key's first waiter and names it, so
//     waiters are granted strictly in the order they asked.
//   - Cancel takes a waiter out of the line, holding nothing. A request already granted
//     cannot be cancelled: the grant stands and its owner releases it.
//   - Releasing a request that holds or waits for nothing (a second release, one never
//     enqueued) does nothing, so it can never free a place someone else now holds.
//   - A key counts only while a request holds or waits for it: Keys is zero whenever the
//     queue is idle, whatever it served, and the memory a queue keeps does not grow with
//     the keys it served.
//   - AskToYield names each holder of a key that others wait for, once per grant, so an
//     owner whose holders keep their places across several uses can ask them to let go.
//
// Waiters exist only while every place of their key is held, because a release hands
// its place over instead of freeing it.
type Queue[K comparable, R Request] struct {
	capacity int
	lines    map[K]*line[K, R]
	// idle is the one line in lines that nobody holds or waits for: the key that went
	// idle last stays in the map, so a key used over and over (a pool's only key) costs
	// no map update per use. Any other idle line leaves the map.
	idle  *line[K, R]
	spare []*line[K, R] // idle lines out of the map kept for reuse, at most maxSpareLines
}

// Request is what a Queue needs of a request: to compare it with ==, and to reach the
// Entry it keeps in it.
type Request interface {
	comparable
	QueueEntry() *Entry
}

// Entry is a request's standing in a Queue, kept inside the request: embed one (its zero
// value means "in no queue") in the owner's record and return it from QueueEntry. Only
// the queue reads or writes it.
type Entry struct {
	line  any // *line[K, R] that the request holds or waits in; nil when in none
	held  bool
	asked bool // named by AskToYield since its grant
}

// maxSpareLines bounds the idle lines a queue keeps for reuse, so a gate that serves
// keys one after another does not allocate a line per use.
const maxSpareLines = 8

// compactAfter is how many granted waiters a line lets pile up at the front of its array
// before it moves the rest down, once they are at least half of it.
const compactAfter = 32

// line is one key's holders and waiters.
type line[K comparable, R Request] struct {
	key     K
	holders []R // at most capacity, in grant order
	waiters []R // waiters[head:] in arrival order
	head    int
}

// NewQueue returns an empty queue of capacity places per key. It panics when capacity
// is below 1, which is a programming error: such a queue could admit nobody.
func NewQueue[K comparable, R Request](capacity int) *Queue[K, R] {
	if capacity < 1 {
		panic(fmt.Sprintf("gates: admission capacity must be at least 1, got %d", capacity))
	}
	return &Queue[K, R]{capacity: capacity, lines: map[K]*line[K, R]{}}
}

// Enqueue asks for a place of key for r and reports whether it was granted at once;
// otherwise r waits, behind everyone already waiting for key. A request that already
// holds or waits is not queued again: Enqueue reports whether it holds.
func (q *Queue[K, R]) Enqueue(key K, r R) (granted bool) {
	e := r.QueueEntry()
	if e.line != nil {
		return e.held
	}
	l := q.line(key)
	*e = Entry{line: l}
	if len(l.holders) < q.capacity && l.waiting() == 0 {
		l.holders = append(l.holders, r)
		e.held = true
		return true
	}
	l.waiters = append(l.waiters, r)
	return false
}

// Release gives back whatever r holds or waits for. When r held a place and someone
// waits for its key, the place goes to the first waiter, which Release returns with ok
// true: the owner tells that request it holds the place now. Releasing a waiter is a
// cancellation; releasing a request that holds and waits for nothing does nothing.
func (q *Queue[K, R]) Release(r R) (next R, ok bool) {
	e := r.QueueEntry()
	l, in := e.line.(*line[K, R])
	if !in {
		return next, false
	}
	held := e.held
	*e = Entry{}
	if !held {
		l.removeWaiter(r)
		q.dropIfIdle(l)
		return next, false
	}
	l.removeHolder(r)
	if l.waiting() > 0 {
		next = l.popWaiter()
		l.holders = append(l.holders, next)
		*next.QueueEntry() = Entry{line: l, held: true}
		return next, true
	}
	q.dropIfIdle(l)
	return next, false
}

// Cancel takes r out of the line it waits in and reports true: it holds nothing now. It
// reports false, changing nothing, when r is not waiting: either it was granted already,
// and the grant stands (the owner must Release it), or it is in no queue.
func (q *Queue[K, R]) Cancel(r R) (cancelled bool) {
	if !q.Waits(r) {
		return false
	}
	q.Release(r)
	return true
}

// AskToYield calls ask for every holder of key that has not been named since its grant,
// when someone waits for key: those are the holders to ask to give their place back at
// their next convenient point. It names nobody while nobody waits.
func (q *Queue[K, R]) AskToYield(key K, ask func(R)) {
	l, ok := q.lines[key]
	if !ok || l.waiting() == 0 {
		return
	}
	for _, h := range l.holders {
		if e := h.QueueEntry(); !e.asked {
			e.asked = true
			ask(h)
		}
	}
}

// Capacity returns the number of places per key.
func (q *Queue[K, R]) Capacity() int { return q.capacity }

// Held returns how many places of key are held now.
func (q *Queue[K, R]) Held(key K) int {
	if l, ok := q.lines[key]; ok {
		return len(l.holders)
	}
	return 0
}

// Waiting returns how many requests wait for key now.
func (q *Queue[K, R]) Waiting(key K) int {
	if l, ok := q.lines[key]; ok {
		return l.waiting()
	}
	return 0
}

// Keys returns how many keys are held or waited for now; zero whenever the queue is idle.
func (q *Queue[K, R]) Keys() int {
	if q.idle != nil {
		return len(q.lines) - 1
	}
	return len(q.lines)
}

// Holds reports whether r holds a place now.
func (q *Queue[K, R]) Holds(r R) bool {
	e := r.QueueEntry()
	return e.line != nil && e.held
}

// Waits reports whether r waits for a place now.
func (q *Queue[K, R]) Waits(r R) bool {
	e := r.QueueEntry()
	return e.line != nil && !e.held
}

func (q *Queue[K, R]) line(key K) *line[K, R] {
	if l, ok := q.lines[key]; ok {
		if l == q.idle {
			q.idle = nil
		}
		return l
	}
	var l *line[K, R]
	if n := len(q.spare); n > 0 {
		l, q.spare = q.spare[n-1], q.spare[:n-1]
	} else {
		l = &line[K, R]{}
	}
	l.key = key
	q.lines[key] = l
	return l
}

// dropIfIdle makes l, when nobody holds or waits for it, the idle line, and takes the
// line idle before it out of the map.
func (q *Queue[K, R]) dropIfIdle(l *line[K, R]) {
	if len(l.holders) > 0 || l.waiting() > 0 {
		return
	}
	if prev := q.idle; prev != nil && prev != l {
		q.evict(prev)
	}
	q.idle = l
}

// evict takes the idle line l out of the map, keeping it for reuse if there is room.
func (q *Queue[K, R]) evict(l *line[K, R]) {
	delete(q.lines, l.key)
	if len(q.spare) < maxSpareLines {
		var zero K
		l.key, l.holders, l.waiters, l.head = zero, l.holders[:0], l.waiters[:0], 0
		q.spare = append(q.spare, l)
	}
}

func (l *line[K, R]) waiting() int { return len(l.waiters) - l.head }

func (l *line[K, R]) popWaiter() R {
	var zero R
	r := l.waiters[l.head]
	l.waiters[l.head] = zero // keep no reference to a request that left
	l.head++
	switch {
	case l.head == len(l.waiters):
		l.waiters, l.head = l.waiters[:0], 0
	case l.head >= compactAfter && 2*l.head >= len(l.waiters):
		// A line that never empties would otherwise grow its array forever: move the
		// waiters down over the ones already granted.
		n := copy(l.waiters, l.waiters[l.head:])
		clear(l.waiters[n:])
		l.waiters, l.head = l.waiters[:n], 0
	}
	return r
}

func (l *line[K, R]) removeWaiter(r R) {
	for i := l.head; i < len(l.waiters); i++ {
		if l.waiters[i] == r {
			var zero R
			copy(l.waiters[i:], l.waiters[i+1:])
			l.waiters[len(l.waiters)-1] = zero
			l.waiters = l.waiters[:len(l.waiters)-1]
			break
		}
	}
	if l.head == len(l.waiters) {
		l.waiters, l.head = l.waiters[:0], 0
	}
}

func (l *line[K, R]) removeHolder(r R) {
	for i, h := range l.holders {
		if h == r {
			var zero R
			last := len(l.holders) - 1
			copy(l.holders[i:], l.holders[i+1:])
			l.holders[last] = zero
			l.holders = l.holders[:last]
			return
		}
	}
}
