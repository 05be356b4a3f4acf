package actors

import (
	"context"
	"testing"
	"time"

	"github.com/retentionkit/retention/core/clock"
)

// BenchmarkBatchWatcher is what runBatch arms around every batch to cancel it: a
// cancellable context under the stop's base and the batch_timeout timer on the wall
// clock, then disarmed when the batch ends.
func BenchmarkBatchWatcher(b *testing.B) {
	base, stop := context.WithCancel(context.Background())
	defer stop()
	clk := clock.Real()
	b.ReportAllocs()
	for b.Loop() {
		ctx, cancel := context.WithCancelCause(base)
		timer := clk.AfterFunc(time.Minute, func() { cancel(errBatchTimedOut) })
		timer.Stop()
		cancel(nil)
		_ = ctx
	}
}
