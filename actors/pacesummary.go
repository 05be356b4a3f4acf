package actors

import (
	"fmt"
	"time"
)

// PaceLine is an adaptive sweep's pacing in one line, as the log shows it after the
// sweep: the batch sizes it chose, its last pause and rate, the probe against its
// baseline, replica lag, and how much of the sweep it spent backing off.
func PaceLine(p PaceSummary) string {
	return fmt.Sprintf("pacing: batches %d-%d rows (last %d), pause %v, rate %.0f rows/s, probe p75 %v vs baseline %v, busy sessions p75 %.1f vs baseline %.1f, replica lag %v, %d back-off(s) over %v",
		p.MinBatch, p.MaxBatch, p.LastBatch, p.LastDelay.Round(10*time.Microsecond), p.Rate,
		p.Probe.Round(time.Microsecond), p.Baseline.Round(time.Microsecond), p.Busy, p.BusyBaseline, p.ReplicaLag.Round(time.Millisecond),
		p.Cuts, p.BackingOff.Round(time.Millisecond))
}
