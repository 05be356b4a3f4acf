package gates

import "fmt"

// Queue is the package's admission rules written once: a fixed number of places per key,
// handed out strictly in arrival order. It never blocks and does no locking, so it has a
// single owner: KeyedGate and SlotPool guard one with a mutex and park goroutines on it,
// and an actor owns one outright and turns its answers into messages.
//
// A request is named by an ID the owner chooses (a ticket, a requester and request
// number); an ID is unique within one queue, across keys. Places are per key; a queue
// that only ever uses one key (the zero value of K, say) is a plain pool of capacity
// places.
//
// The rules:
//   - Enqueue grants at once only when the key has a free place and nobody waits for it: a
//     newcomer queues behind the waiters even when a place has just been freed.
//   - Release hands the freed place straight to the key's first waiter and names it, so
//     waiters are granted strictly in the order they asked.
//   - Cancel takes a waiter out of the line, holding nothing. A request already granted
//     cannot be cancelled: the grant stands and its owner releases it.
//   - Releasing a request that holds or waits for nothing (a second release, an unknown
//     ID) does nothing, so it can never free a place someone else now holds.
//   - A key has an entry only while a request holds or waits for it: Keys is zero whenever
//     the queue is idle, whatever it served.
//   - AskToYield names each holder of a key that others wait for, once per grant, so an
//     owner whose holders keep their places across several uses can ask them to let go.
//
// Waiters exist only while every place of their key is held, because a release hands
// its place over instead of freeing it.
type Queue[K comparable, ID comparable] struct {
	capacity int
	lines    map[K]*line[K, ID]
	entries  map[ID]entry[K, ID]
	spare    []*line[K, ID] // idle lines kept for reuse, at most maxSpareLines
}

// maxSpareLines bounds the idle lines a queue keeps for reuse, so a gate that serves
// keys one after another does not allocate a line per use.
const maxSpareLines = 8

// line is one key's holders and waiters.
type line[K comparable, ID comparable] struct {
	key     K
	holders []ID // at most capacity, in grant order
	waiters []ID // waiters[head:] in arrival order
	head    int
}

type entry[K comparable, ID comparable] struct {
	line  *line[K, ID]
	held  bool
	asked bool // named by AskToYield since its grant
}

// NewQueue returns an empty queue of capacity places per key. It panics when capacity
// is below 1, which is a programming error: such a queue could admit nobody.
func NewQueue[K comparable, ID comparable](capacity int) *Queue[K, ID] {
	if capacity < 1 {
		panic(fmt.Sprintf("gates: admission capacity must be at least 1, got %d", capacity))
	}
	return &Queue[K, ID]{capacity: capacity, lines: map[K]*line[K, ID]{}, entries: map[ID]entry[K, ID]{}}
}

// Enqueue asks for a place of key under id and reports whether it was granted at once;
// otherwise id waits, behind everyone already waiting for key. An id that already holds
// or waits is not queued again: Enqueue reports whether it holds.
func (q *Queue[K, ID]) Enqueue(key K, id ID) (granted bool) {
	if e, ok := q.entries[id]; ok {
		return e.held
	}
	l := q.line(key)
	if len(l.holders) < q.capacity && l.waiting() == 0 {
		l.holders = append(l.holders, id)
		q.entries[id] = entry[K, ID]{line: l, held: true}
		return true
	}
	l.waiters = append(l.waiters, id)
	q.entries[id] = entry[K, ID]{line: l}
	return false
}

// Release gives back whatever id holds or waits for. When id held a place and someone
// waits for its key, the place goes to the first waiter, which Release returns with
// ok true: the owner tells that request it holds the place now. Releasing a waiter is a
// cancellation; releasing an id that holds and waits for nothing does nothing.
func (q *Queue[K, ID]) Release(id ID) (next ID, ok bool) {
	e, known := q.entries[id]
	if !known {
		return next, false
	}
	delete(q.entries, id)
	l := e.line
	if !e.held {
		l.removeWaiter(id)
		q.dropIfIdle(l)
		return next, false
	}
	l.removeHolder(id)
	if l.waiting() > 0 {
		next = l.popWaiter()
		l.holders = append(l.holders, next)
		q.entries[next] = entry[K, ID]{line: l, held: true}
		return next, true
	}
	q.dropIfIdle(l)
	return next, false
}

// Cancel takes id out of the line it waits in and reports true: it holds nothing now.
// It reports false, changing nothing, when id is not waiting: either it was granted
// already, and the grant stands (the owner must Release it), or it is unknown.
func (q *Queue[K, ID]) Cancel(id ID) (cancelled bool) {
	if e, ok := q.entries[id]; !ok || e.held {
		return false
	}
	q.Release(id)
	return true
}

// AskToYield calls ask for every holder of key that has not been named since its grant,
// when someone waits for key: those are the holders to ask to give their place back at
// their next convenient point. It names nobody while nobody waits.
func (q *Queue[K, ID]) AskToYield(key K, ask func(ID)) {
	l, ok := q.lines[key]
	if !ok || l.waiting() == 0 {
		return
	}
	for _, h := range l.holders {
		if e := q.entries[h]; !e.asked {
			e.asked = true
			q.entries[h] = e
			ask(h)
		}
	}
}

// Capacity returns the number of places per key.
func (q *Queue[K, ID]) Capacity() int { return q.capacity }

// Held returns how many places of key are held now.
func (q *Queue[K, ID]) Held(key K) int {
	if l, ok := q.lines[key]; ok {
		return len(l.holders)
	}
	return 0
}

// Waiting returns how many requests wait for key now.
func (q *Queue[K, ID]) Waiting(key K) int {
	if l, ok := q.lines[key]; ok {
		return l.waiting()
	}
	return 0
}

// Keys returns how many keys are held or waited for now; zero whenever the queue is idle.
func (q *Queue[K, ID]) Keys() int { return len(q.lines) }

// Holds reports whether id holds a place now.
func (q *Queue[K, ID]) Holds(id ID) bool { return q.entries[id].held }

// Waits reports whether id waits for a place now.
func (q *Queue[K, ID]) Waits(id ID) bool {
	e, ok := q.entries[id]
	return ok && !e.held
}

func (q *Queue[K, ID]) line(key K) *line[K, ID] {
	if l, ok := q.lines[key]; ok {
		return l
	}
	var l *line[K, ID]
	if n := len(q.spare); n > 0 {
		l, q.spare = q.spare[n-1], q.spare[:n-1]
	} else {
		l = &line[K, ID]{}
	}
	l.key = key
	q.lines[key] = l
	return l
}

// dropIfIdle removes the entry of a key nobody holds or waits for.
func (q *Queue[K, ID]) dropIfIdle(l *line[K, ID]) {
	if len(l.holders) > 0 || l.waiting() > 0 {
		return
	}
	delete(q.lines, l.key)
	if len(q.spare) < maxSpareLines {
		var zero K
		l.key, l.holders, l.waiters, l.head = zero, l.holders[:0], l.waiters[:0], 0
		q.spare = append(q.spare, l)
	}
}

func (l *line[K, ID]) waiting() int { return len(l.waiters) - l.head }

func (l *line[K, ID]) popWaiter() ID {
	var zero ID
	id := l.waiters[l.head]
	l.waiters[l.head] = zero // keep no reference to a request that left
	l.head++
	if l.head == len(l.waiters) {
		l.waiters, l.head = l.waiters[:0], 0
	}
	return id
}

func (l *line[K, ID]) removeWaiter(id ID) {
	for i := l.head; i < len(l.waiters); i++ {
		if l.waiters[i] == id {
			var zero ID
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

func (l *line[K, ID]) removeHolder(id ID) {
	for i, h := range l.holders {
		if h == id {
			var zero ID
			last := len(l.holders) - 1
			copy(l.holders[i:], l.holders[i+1:])
			l.holders[last] = zero
			l.holders = l.holders[:last]
			return
		}
	}
}
