package gates

import (
	"context"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// stressLog checks the invariants of an admission primitive while many callers arrive,
// hold, time out and leave: never more holders than places, and no caller admitted after
// one that arrived later (strict arrival order).
type stressLog struct {
	t        *testing.T
	mu       sync.Mutex
	limit    int
	holding  map[string]int
	granted  map[int]time.Time // caller -> virtual time of its grant
	arrivals map[int]string    // caller -> key
}

func newStressLog(t *testing.T, limit int) *stressLog {
	return &stressLog{t: t, limit: limit, holding: map[string]int{}, granted: map[int]time.Time{}, arrivals: map[int]string{}}
}

func (l *stressLog) enter(caller int, key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.holding[key]++
	if l.holding[key] > l.limit {
		l.t.Errorf("key %q held by %d callers, limit %d", key, l.holding[key], l.limit)
	}
	l.granted[caller] = time.Now()
	l.arrivals[caller] = key
}

func (l *stressLog) leave(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.holding[key]--
}

// checkOrder asserts that of two granted callers of one key, the earlier arrival (lower
// number) was granted no later than the other.
func (l *stressLog) checkOrder(callers int) {
	latest := map[string]time.Time{}
	for c := range callers {
		at, ok := l.granted[c]
		if !ok {
			continue
		}
		key := l.arrivals[c]
		if prev, seen := latest[key]; seen && at.Before(prev) {
			l.t.Fatalf("caller %d of key %q was granted at %v, before an earlier arrival granted at %v", c, key, at, prev)
		}
		latest[key] = at
	}
}

// stressCaller arrives at a distinct virtual time, waits with a random timeout (or
// none), holds for a random span and leaves.
func stressCaller(rng *rand.Rand, caller int, enter func(context.Context) (*Ticket, error), key string, log *stressLog) func() {
	arrive := time.Duration(caller) * time.Millisecond
	hold := time.Duration(rng.IntN(20)) * time.Millisecond
	timeout := time.Duration(0)
	if rng.IntN(3) > 0 {
		timeout = time.Duration(1+rng.IntN(60))*time.Millisecond + 500*time.Microsecond
	}
	return func() {
		time.Sleep(arrive)
		ctx := context.Background()
		if timeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, timeout)
			defer cancel()
		}
		tk, err := enter(ctx)
		if err != nil {
			return
		}
		log.enter(caller, key)
		time.Sleep(hold)
		log.leave(key)
		tk.Release()
	}
}

func TestSlotPoolStress(t *testing.T) {
	t.Parallel()
	const callers, capacity = 3000, 8
	synctest.Test(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(1, 2))
		p := NewSlotPool(capacity)
		log := newStressLog(t, capacity)
		var wg sync.WaitGroup
		for c := range callers {
			wg.Go(stressCaller(rng, c, p.Enter, "pool", log))
		}
		wg.Wait()
		log.checkOrder(callers)
		if p.Available() != capacity || p.Waiting() != 0 {
			t.Fatalf("Available, Waiting = %d, %d; want %d, 0", p.Available(), p.Waiting(), capacity)
		}
		if len(log.granted) == 0 || len(log.granted) == callers {
			t.Fatalf("%d of %d callers were granted: the stress did not mix grants and timeouts", len(log.granted), callers)
		}
	})
}

func TestKeyedGateStress(t *testing.T) {
	t.Parallel()
	const callers = 3000
	keys := []string{"a", "b", "c", "d", "e"}
	synctest.Test(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(3, 4))
		g := NewKeyedGate[string]()
		log := newStressLog(t, 1)
		var wg sync.WaitGroup
		for c := range callers {
			key := keys[rng.IntN(len(keys))]
			wg.Go(stressCaller(rng, c, gateEnter(g, key), key, log))
		}
		wg.Wait()
		log.checkOrder(callers)
		if got := g.TrackedKeys(); got != 0 {
			t.Fatalf("TrackedKeys = %d, want 0", got)
		}
	})
}

// TestGateAndPoolStressRealScheduling runs the composition on the real scheduler, with
// cancellations fired by other goroutines at arbitrary moments, so the race detector
// sees grants and cancellations really interleave.
func TestGateAndPoolStressRealScheduling(t *testing.T) {
	t.Parallel()
	const callers, capacity = 4000, 3
	g := NewKeyedGate[int]()
	p := NewSlotPool(capacity)
	var mu sync.Mutex
	inPool, perKey := 0, map[int]int{}
	var wg sync.WaitGroup
	for c := range callers {
		ctx, cancel := context.WithCancel(context.Background())
		key := c % 7
		if c%3 == 0 {
			wg.Go(func() {
				runtime.Gosched()
				cancel()
			})
		}
		wg.Go(func() {
			defer cancel()
			gt, err := g.Enter(ctx, key)
			if err != nil {
				return
			}
			defer gt.Release()
			st, err := p.Enter(ctx)
			if err != nil {
				return
			}
			defer st.Release()
			mu.Lock()
			inPool++
			perKey[key]++
			if inPool > capacity || perKey[key] > 1 {
				t.Errorf("holders: %d in pool (cap %d), %d of key %d", inPool, capacity, perKey[key], key)
			}
			mu.Unlock()
			runtime.Gosched()
			mu.Lock()
			inPool--
			perKey[key]--
			mu.Unlock()
		})
	}
	wg.Wait()
	if g.TrackedKeys() != 0 || p.Available() != capacity || p.Waiting() != 0 {
		t.Fatalf("after the stress: TrackedKeys %d, Available %d, Waiting %d", g.TrackedKeys(), p.Available(), p.Waiting())
	}
}
