package actors_test

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/actors/actortest"
	"github.com/retentionkit/retention/passes"
)

func quietLogger() *logrus.Logger {
	l := logrus.New()
	l.SetOutput(io.Discard)
	return l
}

// noop is a pass whose batches cost nothing: it always reports a full batch of one, so
// the runtime keeps going and all that is measured is the runtime itself.
type noop struct {
	calls  atomic.Int64
	target int64
	done   chan struct{}
}

func (p *noop) PurgeBatch(context.Context, int, time.Time) (int, error) {
	if p.calls.Add(1) == p.target {
		close(p.done)
	}
	return 1, nil
}

// BenchmarkRuntimeOverheadPerBatch runs b.N no-op batches through the whole runtime (pass
// actor, gate and slot-pool actors, the observer hub with the log observer) on the wall
// clock, and reports the cost per batch and its ratio to calling PurgeBatch in a loop.
func BenchmarkRuntimeOverheadPerBatch(b *testing.B) {
	p := &noop{target: int64(b.N), done: make(chan struct{})}
	opts := passes.DefaultOptions()
	opts.RetentionPeriod = passes.Retain(time.Hour)
	opts.BatchSize, opts.MaxStartupStagger, opts.MaxBatchesPerSweep = 1, 0, b.N+1
	rt := actors.New(actors.Config{Logger: quietLogger()})
	if err := rt.Register(passes.Registration{Name: "noop", New: passes.Reuse(p), Options: opts}); err != nil {
		b.Fatal(err)
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

	plain := &noop{target: -1}
	loopStart := time.Now()
	for range b.N {
		_, _ = plain.PurgeBatch(context.Background(), 1, start)
	}
	perCall := max(time.Since(loopStart)/time.Duration(b.N), time.Nanosecond)
	b.ReportMetric(float64(perBatch.Nanoseconds()), "ns/batch")
	b.ReportMetric(float64(perCall.Nanoseconds()), "ns/plain-call")
	b.ReportMetric(float64(perBatch)/float64(perCall), "x-plain-loop")
}

// BenchmarkIdleTenThousandPasses registers 10,000 passes waiting for their first sweep
// (on a clock that never moves) and reports what they cost while idle: goroutines, heap,
// and CPU time over one second of wall time.
func BenchmarkIdleTenThousandPasses(b *testing.B) {
	const n = 10_000
	for range b.N { // one iteration takes over a second, so the framework runs only one
		runtime.GC()
		goroutinesBefore := runtime.NumGoroutine()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)

		rt := actors.New(actors.Config{Clock: actortest.NewClock(), Logger: quietLogger()})
		opts := passes.DefaultOptions()
		opts.RetentionPeriod = passes.Retain(time.Hour)
		for i := range n {
			if err := rt.Register(passes.Registration{Name: fmt.Sprintf("pass-%05d", i), New: passes.Reuse(&noop{}), Options: opts}); err != nil {
				b.Fatal(err)
			}
		}
		if err := rt.Start(context.Background()); err != nil {
			b.Fatal(err)
		}
		<-time.After(200 * time.Millisecond) // a measurement window: let the spawn settle
		runtime.GC()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		goroutines := runtime.NumGoroutine() - goroutinesBefore

		cpuBefore := cpuTime()
		<-time.After(time.Second) // the idle window CPU is measured over: wall time on purpose
		idleCPU := cpuTime() - cpuBefore

		b.ReportMetric(float64(goroutines), "goroutines")
		b.ReportMetric(float64(after.HeapAlloc-min(before.HeapAlloc, after.HeapAlloc))/n, "heap-B/pass")
		b.ReportMetric(float64(idleCPU.Microseconds())/1000, "idle-cpu-ms/s")
		_ = rt.Stop(context.Background())
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
