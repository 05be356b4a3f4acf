package passes

import (
	"context"
	"testing"
)

// BenchmarkCancelWatcher is the table pass's per-batch cancellation watcher: arming
// cancelOnDone on the batch's cancellable context and disarming it when the batch ends,
// as every PostgreSQL batch does. The statement it would cancel never runs here.
func BenchmarkCancelWatcher(b *testing.B) {
	s := &tableSweep{t: &Table{}, pg: &pinnedSweep{}, pid: 1}
	base, cancel := context.WithCancel(context.Background())
	defer cancel()
	b.ReportAllocs()
	for b.Loop() {
		stop := s.cancelOnDone(base)
		stop()
	}
}
