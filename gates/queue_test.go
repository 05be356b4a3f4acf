package gates

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// req is a request in the tests' queues, named for the messages.
type req struct {
	Entry
	name string
}

func (r *req) QueueEntry() *Entry { return &r.Entry }

// reqs hands out one request per name.
type reqs map[string]*req

func (rs reqs) get(name string) *req {
	if r, ok := rs[name]; ok {
		return r
	}
	r := &req{name: name}
	rs[name] = r
	return r
}

// A step is one operation on a Queue[string, *req], written as words, and what it must
// answer:
//
//	enqueue KEY ID  -> granted | queued
//	release ID      -> granted NEXT | none
//	cancel ID       -> cancelled | not waiting
//	yield KEY       -> the holders named, comma-separated, or -
//	held KEY, waiting KEY, keys -> a count
//	state ID        -> holds | waits | absent
type step struct {
	op, want string
}

func (s step) run(q *Queue[string, *req], rs reqs) string {
	w := strings.Fields(s.op)
	switch w[0] {
	case "enqueue":
		if q.Enqueue(w[1], rs.get(w[2])) {
			return "granted"
		}
		return "queued"
	case "release":
		if next, ok := q.Release(rs.get(w[1])); ok {
			return "granted " + next.name
		}
		return "none"
	case "cancel":
		if q.Cancel(rs.get(w[1])) {
			return "cancelled"
		}
		return "not waiting"
	case "yield":
		var named []string
		q.AskToYield(w[1], func(r *req) { named = append(named, r.name) })
		if len(named) == 0 {
			return "-"
		}
		return strings.Join(named, ",")
	case "held":
		return strconv.Itoa(q.Held(w[1]))
	case "waiting":
		return strconv.Itoa(q.Waiting(w[1]))
	case "keys":
		return strconv.Itoa(q.Keys())
	case "state":
		switch {
		case q.Holds(rs.get(w[1])):
			return "holds"
		case q.Waits(rs.get(w[1])):
			return "waits"
		}
		return "absent"
	}
	panic("unknown step " + s.op)
}

func TestQueueRules(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		capacity int
		steps    []step
	}{
		{"grants up to capacity without waiting", 3, []step{
			{"enqueue p a", "granted"}, {"enqueue p b", "granted"}, {"enqueue p c", "granted"},
			{"held p", "3"}, {"enqueue p d", "queued"}, {"waiting p", "1"},
		}},
		{"release frees the place", 1, []step{
			{"enqueue p a", "granted"}, {"release a", "none"},
			{"held p", "0"}, {"keys", "0"}, {"enqueue p b", "granted"},
		}},
		{"waiters are granted in arrival order", 1, []step{
			{"enqueue p a", "granted"}, {"enqueue p b", "queued"}, {"enqueue p c", "queued"}, {"enqueue p d", "queued"},
			{"release a", "granted b"}, {"release b", "granted c"}, {"release c", "granted d"}, {"release d", "none"},
		}},
		{"a release hands its place over, so the holders stay at capacity", 2, []step{
			{"enqueue p a", "granted"}, {"enqueue p b", "granted"}, {"enqueue p c", "queued"}, {"enqueue p d", "queued"},
			{"release a", "granted c"}, {"held p", "2"}, {"waiting p", "1"}, {"state c", "holds"},
		}},
		{"a newcomer queues behind a waiter even when a place was just freed", 1, []step{
			{"enqueue p a", "granted"}, {"enqueue p b", "queued"},
			{"release a", "granted b"}, {"enqueue p c", "queued"}, {"state c", "waits"},
			{"release b", "granted c"},
		}},
		{"a cancelled waiter leaves the line holding nothing", 1, []step{
			{"enqueue p a", "granted"}, {"enqueue p b", "queued"},
			{"cancel b", "cancelled"}, {"waiting p", "0"}, {"state b", "absent"},
			{"release a", "none"}, {"held p", "0"}, {"keys", "0"},
		}},
		{"a cancelled waiter ahead does not block the next", 1, []step{
			{"enqueue p a", "granted"}, {"enqueue p b", "queued"}, {"enqueue p c", "queued"},
			{"cancel b", "cancelled"}, {"release a", "granted c"},
		}},
		{"a grant already made stands against a cancellation", 1, []step{
			{"enqueue p a", "granted"}, {"enqueue p b", "queued"}, {"release a", "granted b"},
			{"cancel b", "not waiting"}, {"state b", "holds"}, {"held p", "1"},
			{"release b", "none"}, {"held p", "0"},
		}},
		{"a request granted at once cannot be cancelled either", 1, []step{
			{"enqueue p a", "granted"}, {"cancel a", "not waiting"}, {"state a", "holds"},
		}},
		{"a second release is a no-op and frees no other holder's place", 2, []step{
			{"enqueue p a", "granted"}, {"enqueue p b", "granted"}, {"release a", "none"},
			{"enqueue p c", "granted"}, {"release a", "none"}, {"held p", "2"},
			{"enqueue p d", "queued"}, {"release a", "none"}, {"state d", "waits"},
		}},
		{"releasing an unknown request does nothing", 1, []step{
			{"release zz", "none"}, {"cancel zz", "not waiting"}, {"keys", "0"},
		}},
		{"releasing a waiter is a cancellation", 1, []step{
			{"enqueue p a", "granted"}, {"enqueue p b", "queued"}, {"enqueue p c", "queued"},
			{"release b", "none"}, {"state b", "absent"}, {"release a", "granted c"},
		}},
		{"a request is queued once however often it asks", 1, []step{
			{"enqueue p a", "granted"}, {"enqueue p a", "granted"}, {"held p", "1"},
			{"enqueue p b", "queued"}, {"enqueue p b", "queued"}, {"waiting p", "1"},
			{"enqueue q a", "granted"}, {"keys", "1"},
		}},
		{"different keys never wait for each other", 1, []step{
			{"enqueue x a", "granted"}, {"enqueue y b", "granted"}, {"keys", "2"},
		}},
		{"one key is held by one request at a time", 1, []step{
			{"enqueue x a", "granted"}, {"enqueue x b", "queued"}, {"enqueue y c", "granted"},
			{"release c", "none"}, {"state b", "waits"},
		}},
		{"each key keeps its own order", 1, []step{
			{"enqueue x a", "granted"}, {"enqueue y b", "granted"}, {"enqueue x c", "queued"}, {"enqueue y d", "queued"},
			{"enqueue x e", "queued"}, {"release b", "granted d"}, {"release a", "granted c"}, {"release c", "granted e"},
		}},
		{"no entry is left after releases", 1, []step{
			{"enqueue a 1", "granted"}, {"enqueue b 2", "granted"}, {"release 1", "none"},
			{"enqueue c 3", "granted"}, {"enqueue a 4", "granted"}, {"release 2", "none"},
			{"release 3", "none"}, {"release 4", "none"}, {"keys", "0"},
		}},
		{"no entry is left after cancelled waits", 1, []step{
			{"enqueue k a", "granted"}, {"enqueue k b", "queued"}, {"enqueue k c", "queued"}, {"enqueue k d", "queued"},
			{"cancel c", "cancelled"}, {"cancel b", "cancelled"}, {"cancel d", "cancelled"},
			{"keys", "1"}, {"release a", "none"}, {"keys", "0"},
		}},
		{"nobody is asked to yield while nobody waits", 2, []step{
			{"yield p", "-"}, {"enqueue p a", "granted"}, {"enqueue p b", "granted"}, {"yield p", "-"},
		}},
		{"every holder is asked to yield once per grant when someone waits", 2, []step{
			{"enqueue p a", "granted"}, {"enqueue p b", "granted"}, {"enqueue p c", "queued"},
			{"yield p", "a,b"}, {"yield p", "-"},
			{"enqueue p d", "queued"}, {"yield p", "-"},
			{"release a", "granted c"}, {"yield p", "c"},
			{"release b", "granted d"}, {"yield p", "-"},
		}},
		{"a holder asked before a waiter left is not asked again", 1, []step{
			{"enqueue p a", "granted"}, {"enqueue p b", "queued"}, {"yield p", "a"},
			{"cancel b", "cancelled"}, {"enqueue p c", "queued"}, {"yield p", "-"},
		}},
		{"yielding is per key", 1, []step{
			{"enqueue x a", "granted"}, {"enqueue y b", "granted"}, {"enqueue x c", "queued"},
			{"yield y", "-"}, {"yield x", "a"},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q, rs := NewQueue[string, *req](tc.capacity), reqs{}
			for i, s := range tc.steps {
				if got := s.run(q, rs); got != s.want {
					t.Fatalf("step %d %q = %q, want %q", i+1, s.op, got, s.want)
				}
			}
		})
	}
}

func TestNewQueueRefusesCapacityBelowOne(t *testing.T) {
	t.Parallel()
	for _, capacity := range []int{0, -1} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("NewQueue(%d) did not panic", capacity)
				}
			}()
			NewQueue[string, *req](capacity)
		}()
	}
}

// TestQueueRandomOperations runs random enqueues, releases and cancellations over a few
// keys and checks after every step that no key has more holders than places, that
// nobody waits for a key with a free place, and that every grant goes to the earliest
// waiter of its key still waiting. Then everyone leaves and no key is left.
func TestQueueRandomOperations(t *testing.T) {
	t.Parallel()
	const capacity, ids, steps = 2, 40, 20000
	keys := []string{"a", "b", "c"}
	rng := rand.New(rand.NewPCG(5, 6))
	q := NewQueue[string, *req](capacity)
	all := make([]*req, ids)
	for i := range all {
		all[i] = &req{name: strconv.Itoa(i)}
	}
	keyOf := map[*req]string{}
	queued := map[string][]*req{} // the test's own record of who waits, in arrival order
	handovers, cancels := 0, 0
	granted := func(key string, id *req) {
		handovers++
		if w := queued[key]; len(w) == 0 || w[0] != id {
			t.Fatalf("grant of key %s went to %s, the waiters in order were %v", key, id.name, names(w))
		}
		queued[key] = queued[key][1:]
	}
	for range steps {
		id := all[rng.IntN(ids)]
		switch key, known := keyOf[id]; {
		case !known:
			key = keys[rng.IntN(len(keys))]
			keyOf[id] = key
			if !q.Enqueue(key, id) {
				queued[key] = append(queued[key], id)
			}
		case rng.IntN(2) == 0 && q.Waits(id):
			if !q.Cancel(id) {
				t.Fatalf("cancel of waiter %s refused", id.name)
			}
			queued[key] = slices.DeleteFunc(queued[key], func(w *req) bool { return w == id })
			delete(keyOf, id)
			cancels++
		default:
			if next, ok := q.Release(id); ok {
				granted(key, next)
			}
			queued[key] = slices.DeleteFunc(queued[key], func(w *req) bool { return w == id })
			delete(keyOf, id)
		}
		for _, k := range keys {
			if h, w := q.Held(k), q.Waiting(k); h > capacity || (w > 0 && h < capacity) || w != len(queued[k]) {
				t.Fatalf("key %s: %d held, %d waiting (%d recorded), capacity %d", k, h, w, len(queued[k]), capacity)
			}
		}
	}
	if handovers < steps/20 || cancels < steps/20 {
		t.Fatalf("%d hand-overs and %d cancellations in %d steps: the operations did not mix", handovers, cancels, steps)
	}
	for id, key := range keyOf {
		if q.Holds(id) {
			if next, ok := q.Release(id); ok {
				granted(key, next)
			}
		}
	}
	for id := range keyOf {
		q.Release(id)
	}
	if q.Keys() != 0 || len(q.lines) > 1 {
		t.Fatalf("Keys = %d and %d lines kept after everyone left", q.Keys(), len(q.lines))
	}
}

// TestQueueKeepsNothingPerKeyServed serves thousands of distinct keys, some of them at
// the same time, and checks that what the queue keeps afterwards does not depend on
// how many it served.
func TestQueueKeepsNothingPerKeyServed(t *testing.T) {
	t.Parallel()
	q := NewQueue[string, *req](1)
	var open []*req
	for i := range 5000 {
		r := &req{name: strconv.Itoa(i)}
		if !q.Enqueue("key-"+r.name, r) {
			t.Fatalf("a fresh key %s was not granted at once", r.name)
		}
		open = append(open, r)
		if len(open) == 3 || i%7 == 0 {
			for _, o := range open {
				q.Release(o)
			}
			open = open[:0]
		}
	}
	for _, o := range open {
		q.Release(o)
	}
	if q.Keys() != 0 || len(q.lines) > 1 || len(q.spare) > maxSpareLines {
		t.Fatalf("after 5000 keys: Keys %d, %d lines in the map, %d spare", q.Keys(), len(q.lines), len(q.spare))
	}
}

func ExampleQueue() {
	q := NewQueue[string, *req](1) // one place per table
	first, second := &req{name: "sweep-1"}, &req{name: "sweep-2"}
	fmt.Println(q.Enqueue("audit_log", first))
	fmt.Println(q.Enqueue("audit_log", second))
	q.AskToYield("audit_log", func(holder *req) { fmt.Println("ask", holder.name, "to yield") })
	next, ok := q.Release(first)
	fmt.Println(next.name, ok)
	// Output:
	// true
	// false
	// ask sweep-1 to yield
	// sweep-2 true
}

// TestQueueLineThatNeverEmptiesStaysBounded keeps a key contended for a long time, a
// holder handing over to a waiter while a newcomer queues, and checks that the line's
// array does not grow with the number of requests it served.
func TestQueueLineThatNeverEmptiesStaysBounded(t *testing.T) {
	t.Parallel()
	q := NewQueue[string, *req](1)
	var line []*req // the test's record: line[0] holds, the rest wait
	for id := range 5 {
		line = append(line, &req{name: strconv.Itoa(id)})
		q.Enqueue("k", line[id])
	}
	for id := 5; id < 100_000; id++ {
		next, ok := q.Release(line[0])
		if !ok || next != line[1] {
			t.Fatalf("release of %s granted %v, %v; want %s", line[0].name, next, ok, line[1].name)
		}
		line = append(line[1:], &req{name: strconv.Itoa(id)})
		q.Enqueue("k", line[len(line)-1])
	}
	if n := cap(q.lines["k"].waiters); n > 4*compactAfter {
		t.Fatalf("the line's array holds %d places for 4 waiters", n)
	}
}

func names(rs []*req) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.name
	}
	return out
}
