package gates

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"

	"golang.org/x/sync/semaphore"
)

// The benchmarks compare admission through a SlotPool and a KeyedGate with
// golang.org/x/sync/semaphore.Weighted, the usual FIFO semaphore, as the baseline. The
// contended cases run GOMAXPROCS×8 goroutines against few places.

func BenchmarkSlotPoolUncontended(b *testing.B) {
	p := NewSlotPool(1)
	ctx := context.Background()
	for b.Loop() {
		tk, _ := p.Enter(ctx)
		tk.Release()
	}
}

func BenchmarkSemaphoreUncontended(b *testing.B) {
	s := semaphore.NewWeighted(1)
	ctx := context.Background()
	for b.Loop() {
		_ = s.Acquire(ctx, 1)
		s.Release(1)
	}
}

func BenchmarkKeyedGateUncontended(b *testing.B) {
	g := NewKeyedGate[string]()
	ctx := context.Background()
	for b.Loop() {
		tk, _ := g.Enter(ctx, "audit_log")
		tk.Release()
	}
}

func BenchmarkSlotPoolContended(b *testing.B) {
	p := NewSlotPool(2)
	ctx := context.Background()
	b.SetParallelism(8)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			tk, _ := p.Enter(ctx)
			tk.Release()
		}
	})
}

func BenchmarkSemaphoreContended(b *testing.B) {
	s := semaphore.NewWeighted(2)
	ctx := context.Background()
	b.SetParallelism(8)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			_ = s.Acquire(ctx, 1)
			s.Release(1)
		}
	})
}

func BenchmarkKeyedGateContendedOneKey(b *testing.B) {
	g := NewKeyedGate[string]()
	ctx := context.Background()
	b.SetParallelism(8)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			tk, _ := g.Enter(ctx, "audit_log")
			tk.Release()
		}
	})
}

// BenchmarkKeyedGateManyKeys has every goroutine on a key of its own: the cost of the
// shared map and of creating and dropping entries.
func BenchmarkKeyedGateManyKeys(b *testing.B) {
	g := NewKeyedGate[string]()
	ctx := context.Background()
	b.SetParallelism(8)
	var next atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		key := "table_" + strconv.FormatInt(next.Add(1), 10)
		for pb.Next() {
			tk, _ := g.Enter(ctx, key)
			tk.Release()
		}
	})
}
