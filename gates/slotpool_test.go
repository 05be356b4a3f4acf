package gates

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
)

// enterAsync starts Enter on its own goroutine and returns a channel with its result.
func enterAsync(ctx context.Context, enter func(context.Context) (*Ticket, error)) <-chan result {
	ch := make(chan result, 1)
	go func() {
		t, err := enter(ctx)
		ch <- result{t, err}
	}()
	return ch
}

type result struct {
	ticket *Ticket
	err    error
}

func mustEnter(t *testing.T, enter func(context.Context) (*Ticket, error)) *Ticket {
	t.Helper()
	tk, err := enter(context.Background())
	if err != nil {
		t.Fatalf("Enter: %v", err)
	}
	return tk
}

// TestSlotPool holds the blocking side of a SlotPool: callers parked and woken in order,
// cancellation of a parked caller, and a grant racing a cancellation. The rules
// themselves (capacity, hand-over, a second release) are tested on Queue.
func TestSlotPool(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"admits waiters in arrival order", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := NewSlotPool(1)
				holder := mustEnter(t, p.Enter)
				var order []int
				var mu sync.Mutex
				var wg sync.WaitGroup
				for i := range 5 {
					wg.Go(func() {
						tk := mustEnter(t, p.Enter)
						mu.Lock()
						order = append(order, i)
						mu.Unlock()
						tk.Release()
					})
					synctest.Wait() // waiter i is queued before i+1 arrives
				}
				holder.Release()
				wg.Wait()
				for i, got := range order {
					if got != i {
						t.Fatalf("admission order = %v, want 0..4", order)
					}
				}
			})
		}},
		{"newcomer queues behind waiters even when a slot was just freed", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := NewSlotPool(1)
				holder := mustEnter(t, p.Enter)
				first := enterAsync(t.Context(), p.Enter)
				synctest.Wait()
				holder.Release() // hands the slot to first, not to whoever comes next
				if got := p.Available(); got != 0 {
					t.Fatalf("Available after hand-over = %d, want 0", got)
				}
				newcomer := enterAsync(t.Context(), p.Enter)
				synctest.Wait()
				select {
				case <-newcomer:
					t.Fatal("newcomer overtook a waiter")
				default:
				}
				r := <-first
				r.ticket.Release()
				(<-newcomer).ticket.Release()
			})
		}},
		{"already cancelled context fails with a slot free and takes nothing", func(t *testing.T) {
			p := NewSlotPool(2)
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			tk, err := p.Enter(ctx)
			if !errors.Is(err, context.Canceled) || tk != nil {
				t.Fatalf("Enter = %v, %v; want nil, context.Canceled", tk, err)
			}
			if got := p.Available(); got != 2 {
				t.Fatalf("Available = %d, want 2", got)
			}
		}},
		{"cancelled while waiting leaves the queue holding nothing", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := NewSlotPool(1)
				holder := mustEnter(t, p.Enter)
				ctx, cancel := context.WithCancel(t.Context())
				waiting := enterAsync(ctx, p.Enter)
				synctest.Wait()
				cancel()
				r := <-waiting
				if !errors.Is(r.err, context.Canceled) || r.ticket != nil {
					t.Fatalf("Enter = %v, %v; want nil, context.Canceled", r.ticket, r.err)
				}
				if got := p.Waiting(); got != 0 {
					t.Fatalf("Waiting = %d, want 0", got)
				}
				holder.Release()
				if got := p.Available(); got != 1 {
					t.Fatalf("Available = %d, want 1: the cancelled waiter kept a slot", got)
				}
			})
		}},
		{"cancelled waiter ahead does not block the next", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := NewSlotPool(1)
				holder := mustEnter(t, p.Enter)
				ctx, cancel := context.WithCancel(t.Context())
				first := enterAsync(ctx, p.Enter)
				synctest.Wait()
				second := enterAsync(t.Context(), p.Enter)
				synctest.Wait()
				cancel()
				<-first
				holder.Release()
				r := <-second
				if r.err != nil {
					t.Fatalf("second waiter: %v", r.err)
				}
				r.ticket.Release()
			})
		}},
		{"grant made before the cancellation stands", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := NewSlotPool(1)
				holder := mustEnter(t, p.Enter)
				ctx, cancel := context.WithCancel(t.Context())
				waiting := enterAsync(ctx, p.Enter)
				synctest.Wait()
				// Grant and cancel before the waiter runs again: both are ready to it.
				holder.Release()
				cancel()
				r := <-waiting
				if r.err != nil || r.ticket == nil {
					t.Fatalf("Enter = %v, %v; want the granted ticket", r.ticket, r.err)
				}
				if got := p.Available(); got != 0 {
					t.Fatalf("Available = %d, want 0 while the grant is held", got)
				}
				r.ticket.Release()
				if got := p.Available(); got != 1 {
					t.Fatalf("Available = %d, want 1", got)
				}
			})
		}},
		{"Capacity and Available report the slots", func(t *testing.T) {
			p := NewSlotPool(4)
			tk := mustEnter(t, p.Enter)
			if p.Capacity() != 4 || p.Available() != 3 {
				t.Fatalf("Capacity, Available = %d, %d; want 4, 3", p.Capacity(), p.Available())
			}
			tk.Release()
			tk.Release()
			if p.Capacity() != 4 || p.Available() != 4 {
				t.Fatalf("after a double release: Capacity, Available = %d, %d; want 4, 4", p.Capacity(), p.Available())
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, tc.run)
	}
}

func TestNewSlotPoolRefusesCapacityBelowOne(t *testing.T) {
	t.Parallel()
	for _, capacity := range []int{0, -1} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("NewSlotPool(%d) did not panic", capacity)
				}
			}()
			NewSlotPool(capacity)
		}()
	}
}
