package actors_test

import (
	"context"
	"testing"
	"time"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/passes"
)

// BenchmarkContendedAdmissionPerBatch runs b.N no-op batches of two passes on different
// targets that share one slot, on the wall clock. Each always has a full batch, so each
// holder is asked to yield with the other waiting, and every batch goes through the gate
// and the slot-pool actors: what is measured is admission under contention.
func BenchmarkContendedAdmissionPerBatch(b *testing.B) {
	p := &noop{target: int64(b.N), done: make(chan struct{})}
	opts := passes.DefaultOptions()
	opts.RetentionPeriod = passes.Retain(time.Hour)
	opts.BatchSize, opts.MaxStartupStagger, opts.MaxBatchesPerSweep = 1, 0, b.N+1
	rt := actors.New(actors.Config{Logger: quietLogger(), MaxConcurrentDeletes: 1})
	for _, name := range []string{"a", "b"} {
		if err := rt.Register(passes.Registration{Name: name, Target: name, New: passes.Reuse(p), Options: opts}); err != nil {
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
}
