package actors_test

import (
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/actors/actortest"
	"github.com/retentionkit/retention/passes"
)

// eagerPool is a slot pool of the test's own behind actors.AdmissionPool: it grants every
// request at once (no limit at all), optionally asks the holder to yield with every
// grant, and records what it was asked.
type eagerPool struct {
	capacity int  // reported in Status only
	yield    bool // send YieldSlot with every grant

	mu       sync.Mutex
	acquires int
	open     map[string]bool // "pid/req" granted and not released
}

func (p *eagerPool) Props() *actor.Props {
	return actor.PropsFromFunc(func(ctx actor.Context) {
		p.mu.Lock()
		defer p.mu.Unlock()
		switch m := ctx.Message().(type) {
		case *actors.AcquireSlot:
			p.acquires++
			p.open[fmt.Sprintf("%s/%d", m.From.Id, m.Req)] = true
			ctx.Send(m.From, &actors.SlotGranted{Req: m.Req})
			if p.yield {
				ctx.Send(m.From, &actors.YieldSlot{Req: m.Req})
			}
		case *actors.ReleaseSlot:
			delete(p.open, fmt.Sprintf("%s/%d", m.From.Id, m.Req))
		}
	})
}

func (p *eagerPool) Status() actors.SlotStatus {
	p.mu.Lock()
	defer p.mu.Unlock()
	return actors.SlotStatus{InUse: len(p.open), Capacity: p.capacity}
}

func (p *eagerPool) counts() (acquires, open int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.acquires, len(p.open)
}

func TestPassesRunOnTheSlotPoolConfigGives(t *testing.T) {
	t.Parallel()
	const passCount, batches = 2, 3
	tests := []struct {
		name         string
		yield        bool
		wantAcquires int
	}{
		{"a pool that asks to yield with every grant is asked once per batch", true, passCount * batches},
		{"a pool that never asks to yield is asked once per sweep", false, passCount},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pool := &eagerPool{yield: tc.yield, open: map[string]bool{}}
			var asked []string
			cfg := actors.Config{MaxConcurrentDeletes: 1, SlotPools: func(db string, capacity int) actors.AdmissionPool {
				asked = append(asked, fmt.Sprintf("%s:%d", db, capacity))
				pool.capacity = capacity
				return pool
			}}
			actortest.Run(t, cfg, func(t *testing.T, h *actortest.Harness) {
				fake := actortest.NewFakePass().Otherwise(actortest.Block(1)) // always a full batch
				for i := range passCount {
					h.Register(passes.Registration{Name: fmt.Sprintf("p%d", i), Target: fmt.Sprintf("t%d", i), New: fake.Factory(),
						Options: options(time.Hour, func(o *passes.Options) { o.BatchSize, o.MaxStartupStagger, o.MaxBatchesPerSweep = 1, 0, batches })})
				}
				h.Start()
				if now, _ := fake.Running(); now != passCount {
					t.Fatalf("%d batches running, want %d: the runtime's own limit of 1 was used, not the configured pool", now, passCount)
				}
				if got := h.Runtime.Status().Slots[passes.DefaultDatabase]; got != (actors.SlotStatus{InUse: passCount, Capacity: 1}) {
					t.Fatalf("Status slots = %+v, want the pool's own numbers", got)
				}
				for round := 0; len(fake.Calls()) < passCount*batches; round++ {
					if round > 10 {
						t.Fatalf("only %d of %d batches ran", len(fake.Calls()), passCount*batches)
					}
					fake.Release()
					h.Settle()
				}
				fake.Release()
				h.Settle()
				if done := actortest.Filter[actors.SweepDone](h.Probe.Events(), actortest.Is[actors.SweepDone]()); len(done) != passCount {
					t.Fatalf("%d sweeps done, want %d", len(done), passCount)
				}
				if acquires, open := pool.counts(); acquires != tc.wantAcquires || open != 0 {
					t.Fatalf("pool asked %d times with %d left held, want %d and 0", acquires, open, tc.wantAcquires)
				}
			})
			if len(asked) != 1 || asked[0] != passes.DefaultDatabase+":1" {
				t.Fatalf("SlotPools called with %v, want once for %s:1", asked, passes.DefaultDatabase)
			}
		})
	}
}

// TestLocalSlotPoolKeepsTheSlotProtocol drives the local pool's actor with plain
// requesters, as any pool must be driven: a grant for the first, a request to yield
// once someone waits (once per grant), a second release that frees nothing, and a
// requester that stops while waiting or holding gives its place back without a word.
func TestLocalSlotPoolKeepsTheSlotProtocol(t *testing.T) {
	t.Parallel()
	sys := actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger { return slog.New(slog.DiscardHandler) }))
	pool := sys.Root.Spawn(actors.NewLocalSlotPool(1).Props())
	heard := make(chan string, 16)
	requester := func(name string) *actor.PID {
		return sys.Root.Spawn(actor.PropsFromFunc(func(c actor.Context) {
			switch m := c.Message().(type) {
			case *actors.SlotGranted:
				heard <- fmt.Sprintf("%s granted %d", name, m.Req)
			case *actors.YieldSlot:
				heard <- fmt.Sprintf("%s yield %d", name, m.Req)
			}
		}))
	}
	expect := func(want string) {
		t.Helper()
		select {
		case got := <-heard:
			if got != want {
				t.Fatalf("heard %q, want %q", got, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("heard nothing, want %q", want)
		}
	}
	a, b, c := requester("a"), requester("b"), requester("c")
	sys.Root.Send(pool, &actors.ReleaseSlot{Req: 7, From: a}) // unknown: nothing happens
	sys.Root.Send(pool, &actors.AcquireSlot{Req: 1, From: a})
	expect("a granted 1")
	sys.Root.Send(pool, &actors.AcquireSlot{Req: 1, From: b})
	expect("a yield 1")
	sys.Root.Send(pool, &actors.AcquireSlot{Req: 1, From: c}) // a was asked already
	if err := sys.Root.StopFuture(b).Wait(); err != nil {
		t.Fatal(err)
	}
	sys.Root.Send(pool, &actors.ReleaseSlot{Req: 1, From: a})
	sys.Root.Send(pool, &actors.ReleaseSlot{Req: 1, From: a}) // a second release frees nothing
	expect("c granted 1")                                     // b, stopped while waiting, left the line
	sys.Root.Send(pool, &actors.AcquireSlot{Req: 2, From: a})
	expect("c yield 1")
	if err := sys.Root.StopFuture(c).Wait(); err != nil {
		t.Fatal(err)
	}
	expect("a granted 2") // c, stopped while holding, gave its slot back
	select {
	case got := <-heard:
		t.Fatalf("heard %q after the last expected message", got)
	default:
	}
}
