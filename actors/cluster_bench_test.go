package actors_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/dbtest"
)

// BenchmarkClusterGuardsPerBatch measures, per no-op batch, what cluster mode's
// PostgreSQL guards add to single-node admission, side by side in one run:
//
//   - local: the in-process slot pool, one pass; uncontended, it keeps its slot across
//     back-to-back batches, so a batch costs no admission round trip.
//   - local/contended: two passes on one in-process slot, yielding it every batch.
//   - advisory: the advisory pool on PostgreSQL, one pass: also keeps its slot (the pool
//     polls pg_locks for other members' waiters in the background).
//   - advisory/contended: two passes on one advisory slot, so every batch gives it back
//     and takes it again through the queue lock: what yielding on every grant would
//     cost every batch.
//   - exclusive: the local pool, with the pass wrapped in passes.Exclusive, which
//     confirms its lock connection before every batch (one SELECT 1).
//
// It needs PostgreSQL (TEST_DATABASE_URL) and skips without it.
func BenchmarkClusterGuardsPerBatch(b *testing.B) {
	for _, c := range []struct {
		name      string
		advisory  bool
		passes    int
		exclusive bool
	}{
		{"local", false, 1, false},
		{"local/contended", false, 2, false},
		{"advisory", true, 1, false},
		{"advisory/contended", true, 2, false},
		{"exclusive", false, 1, true},
	} {
		b.Run(c.name, func(b *testing.B) {
			db := dbtest.Postgres(b)
			cfg := actors.Config{Logger: quietLogger(), MaxConcurrentDeletes: 1}
			if c.advisory {
				slots, err := passes.OpenAdvisorySlots(context.Background(), dbtest.PostgresURL(), fmt.Sprintf("bench%08x", rand.Uint32()), passes.SweepConnOptions{})
				if err != nil {
					b.Fatal(err)
				}
				defer slots.Close()
				cfg.SlotPools = func(_ string, capacity int) actors.AdmissionPool { return actors.NewAdvisorySlotPool(slots, capacity) }
			}
			p := &noop{target: int64(b.N), done: make(chan struct{})}
			opts := passes.DefaultOptions()
			opts.RetentionPeriod = passes.Retain(time.Hour)
			opts.BatchSize, opts.MaxStartupStagger, opts.MaxBatchesPerSweep = 1, 0, b.N+1
			rt := actors.New(cfg)
			for i := range c.passes {
				name := fmt.Sprintf("p%d", i)
				factory := passes.Reuse(p)
				if c.exclusive {
					var err error
					if factory, err = passes.Exclusive(db, fmt.Sprintf("bench%08x", rand.Uint32()), factory); err != nil {
						b.Fatal(err)
					}
				}
				if err := rt.Register(passes.Registration{Name: name, Target: name, New: factory, Options: opts}); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			start := time.Now()
			if err := rt.Start(context.Background()); err != nil {
				b.Fatal(err)
			}
			<-p.done
			perBatch := time.Since(start) / time.Duration(b.N)
			b.StopTimer()
			_ = rt.Stop(context.Background())
			b.ReportMetric(float64(perBatch.Nanoseconds()), "ns/batch")
		})
	}
}
