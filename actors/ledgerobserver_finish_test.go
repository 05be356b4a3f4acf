package actors

import (
	"testing"

	"github.com/retentionkit/retention/passes/ledger"
)

// TestASweepsStopReasonDecidesItsRunState holds the ledger to the runtime's own reading
// of a stop reason: a contended sweep did its work and left the rest to the next one, so
// its run is Completed, not Cancelled.
func TestASweepsStopReasonDecidesItsRunState(t *testing.T) {
	t.Parallel()
	cases := []struct {
		reason StopReason
		want   ledger.State
	}{
		{Drained, ledger.Completed},
		{BatchLimit, ledger.Completed},
		{Contended, ledger.Completed},
		{Failed, ledger.Failed},
		{Cancelled, ledger.Cancelled},
		{Stopped, ledger.Cancelled},
		{Elsewhere, ledger.Cancelled}, // this node did none of it: not a completed run
	}
	for _, c := range cases {
		if got := finishOf(SweepDone{Reason: c.reason}).State; got != c.want {
			t.Errorf("%s: run state %s, want %s", c.reason, got, c.want)
		}
	}
}
