package gates

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
	"testing/synctest"
)

func gateEnter(g *KeyedGate[string], key string) func(context.Context) (*Ticket, error) {
	return func(ctx context.Context) (*Ticket, error) { return g.Enter(ctx, key) }
}

// TestKeyedGate holds the blocking side of a KeyedGate: a caller parked while its key is
// held, woken in order, cancelled while parked. The rules themselves (keys apart, no
// entry left after releases) are tested on Queue.
func TestKeyedGate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"same key is held by one caller at a time", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				g := NewKeyedGate[string]()
				holder := mustEnter(t, gateEnter(g, "audit_log"))
				second := enterAsync(t.Context(), gateEnter(g, "audit_log"))
				synctest.Wait()
				select {
				case <-second:
					t.Fatal("second caller entered while the key was held")
				default:
				}
				holder.Release()
				(<-second).ticket.Release()
			})
		}},
		{"waiters of one key are admitted in arrival order", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				g := NewKeyedGate[string]()
				holder := mustEnter(t, gateEnter(g, "k"))
				var order []int
				var mu sync.Mutex
				var wg sync.WaitGroup
				for i := range 6 {
					wg.Go(func() {
						tk := mustEnter(t, gateEnter(g, "k"))
						mu.Lock()
						order = append(order, i)
						mu.Unlock()
						tk.Release()
					})
					synctest.Wait()
				}
				if got := g.waiting("k"); got != 6 {
					t.Fatalf("waiting = %d, want 6", got)
				}
				holder.Release()
				wg.Wait()
				for i, got := range order {
					if got != i {
						t.Fatalf("admission order = %v, want 0..5", order)
					}
				}
			})
		}},
		{"no entry is left after cancelled waits", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				g := NewKeyedGate[string]()
				holder := mustEnter(t, gateEnter(g, "k"))
				ctx, cancel := context.WithCancel(t.Context())
				var waits []<-chan result
				for range 3 {
					waits = append(waits, enterAsync(ctx, gateEnter(g, "k")))
				}
				synctest.Wait()
				cancel()
				for _, w := range waits {
					if r := <-w; !errors.Is(r.err, context.Canceled) {
						t.Fatalf("cancelled waiter got %v", r.err)
					}
				}
				holder.Release()
				if got := g.TrackedKeys(); got != 0 {
					t.Fatalf("TrackedKeys = %d, want 0", got)
				}
			})
		}},
		{"already cancelled context fails before taking the key", func(t *testing.T) {
			g := NewKeyedGate[string]()
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			if _, err := g.Enter(ctx, "k"); !errors.Is(err, context.Canceled) {
				t.Fatalf("Enter = %v, want context.Canceled", err)
			}
			if got := g.TrackedKeys(); got != 0 {
				t.Fatalf("TrackedKeys = %d, want 0", got)
			}
		}},
		{"second release does not let a waiter in beside the holder", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				g := NewKeyedGate[string]()
				first := mustEnter(t, gateEnter(g, "k"))
				second := enterAsync(t.Context(), gateEnter(g, "k"))
				synctest.Wait()
				third := enterAsync(t.Context(), gateEnter(g, "k"))
				synctest.Wait()
				first.Release()
				r := <-second
				first.Release() // must not admit third while second holds the key
				synctest.Wait()
				select {
				case <-third:
					t.Fatal("a double release admitted a second holder")
				default:
				}
				r.ticket.Release()
				(<-third).ticket.Release()
			})
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, tc.run)
	}
}

func TestGateThenPool(t *testing.T) {
	t.Parallel()
	t.Run("cancelled slot wait gives the gate back", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			g := NewKeyedGate[string]()
			p := NewSlotPool(1)
			other := mustEnter(t, p.Enter) // the only slot is busy elsewhere
			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan error, 1)
			go func() {
				gt, err := g.Enter(ctx, "k")
				if err != nil {
					done <- err
					return
				}
				defer gt.Release()
				st, err := p.Enter(ctx)
				if err != nil {
					done <- err
					return
				}
				st.Release()
				done <- nil
			}()
			synctest.Wait()
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Fatalf("got %v, want context.Canceled", err)
			}
			// The goroutine sends before its deferred Release runs: let it finish.
			synctest.Wait()
			if got := g.TrackedKeys(); got != 0 {
				t.Fatalf("TrackedKeys = %d, want 0: the gate was not given back", got)
			}
			other.Release()
		})
	})
	t.Run("two pools sharing one gate never admit two holders of a key", func(t *testing.T) {
		g := NewKeyedGate[string]()
		pools := []*SlotPool{NewSlotPool(4), NewSlotPool(4)}
		var holding [3]int32
		var mu sync.Mutex
		var wg sync.WaitGroup
		keys := []string{"a", "b", "c"}
		for i := range 300 {
			wg.Go(func() {
				k := i % len(keys)
				gt := mustEnter(t, gateEnter(g, keys[k]))
				defer gt.Release()
				st := mustEnter(t, pools[i%2].Enter)
				defer st.Release()
				mu.Lock()
				holding[k]++
				if holding[k] > 1 {
					t.Errorf("key %s held by %d callers", keys[k], holding[k])
				}
				mu.Unlock()
				runtime.Gosched() // give another holder of k a chance to show up
				mu.Lock()
				holding[k]--
				mu.Unlock()
			})
		}
		wg.Wait()
		if got := g.TrackedKeys(); got != 0 {
			t.Fatalf("TrackedKeys = %d, want 0", got)
		}
	})
}
