package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/supervisor"
)

// Observer is an actors.Observer that turns events into Prometheus metrics, so a
// retention that silently stopped working shows on a dashboard. Create it before the
// runtime (it is one of the runtime's observers), then Register it once the passes are
// registered, so every series exists at zero from the first scrape.
type Observer struct {
	rows, skipped, batches *prometheus.CounterVec
	sweeps                 *prometheus.CounterVec
	failures, restarts     *prometheus.CounterVec
	batchSeconds           *prometheus.HistogramVec
	lastSuccess            *prometheus.GaugeVec
	drift                  *prometheus.GaugeVec
	lockDenials            *prometheus.CounterVec
	// partitions counts the retire phase's outcomes (partitions.go).
	partitions, partitionRows *prometheus.CounterVec
}

// NewObserver returns the observer with its metrics, not yet registered anywhere.
func NewObserver() *Observer {
	pass := []string{"pass"}
	return &Observer{
		rows:         prometheus.NewCounterVec(prometheus.CounterOpts{Name: "retention_rows_deleted_total", Help: "Rows deleted."}, pass),
		skipped:      prometheus.NewCounterVec(prometheus.CounterOpts{Name: "retention_rows_skipped_total", Help: "Rows left in place because deleting them failed."}, pass),
		batches:      prometheus.NewCounterVec(prometheus.CounterOpts{Name: "retention_batches_total", Help: "Batches run."}, pass),
		sweeps:       prometheus.NewCounterVec(prometheus.CounterOpts{Name: "retention_sweeps_total", Help: "Sweeps ended, by outcome."}, []string{"pass", "reason"}),
		failures:     prometheus.NewCounterVec(prometheus.CounterOpts{Name: "retention_failures_total", Help: "Sweeps that failed."}, pass),
		restarts:     prometheus.NewCounterVec(prometheus.CounterOpts{Name: "retention_restarts_total", Help: "Supervised restarts."}, pass),
		batchSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "retention_batch_duration_seconds", Help: "Time one batch took.", Buckets: prometheus.ExponentialBuckets(0.001, 4, 10)}, pass),
		lastSuccess:  prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "retention_last_success_timestamp_seconds", Help: "When the pass last finished a sweep that did not fail; 0 until its first."}, pass),
		drift:        prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "retention_configuration_drift", Help: "1 while the pass's last failure was a table or column missing, until a sweep succeeds."}, pass),
		lockDenials:  prometheus.NewCounterVec(prometheus.CounterOpts{Name: "retention_lock_denials_total", Help: "Sweeps that did not start because another session (another cluster member) holds the pass's advisory lock."}, pass),
		partitions:   prometheus.NewCounterVec(prometheus.CounterOpts{Name: "retention_partitions_total", Help: "Expired partitions by what the retire phase did with them: retired, contended (left to the row path for the sweep), kept (left to the row path)."}, []string{"pass", "outcome"}),
		partitionRows: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "retention_partition_rows_estimated_total",
			Help: "The planner's estimate of the rows in retired partitions: an estimate, not a count."}, pass),
	}
}

// collectors are the observer's metrics, for registering.
func (m *Observer) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.rows, m.skipped, m.batches, m.sweeps, m.failures, m.restarts, m.batchSeconds, m.lastSuccess, m.drift, m.lockDenials, m.partitions, m.partitionRows}
}

// sweepReasons are the outcomes retention_sweeps_total shows from startup.
func sweepReasons() []actors.StopReason {
	return []actors.StopReason{actors.Drained, actors.BatchLimit, actors.Failed, actors.Cancelled, actors.Stopped, actors.Contended, actors.Elsewhere, actors.Held}
}

// zero creates every per-pass series at zero, so rate() works from the first scrape and
// an absent series means an unscraped node, not a pass that has not failed yet.
func (m *Observer) zero(pass string) {
	for _, v := range []*prometheus.CounterVec{m.rows, m.skipped, m.batches, m.failures, m.restarts, m.lockDenials} {
		v.WithLabelValues(pass)
	}
	for _, r := range sweepReasons() {
		m.sweeps.WithLabelValues(pass, string(r))
	}
	m.batchSeconds.WithLabelValues(pass)
	m.zeroPartitions(pass)
	for _, v := range []*prometheus.GaugeVec{m.lastSuccess, m.drift} {
		v.WithLabelValues(pass)
	}
}

// Observe updates the metrics from one event.
func (m *Observer) Observe(e actors.Event) error {
	p := e.PassName()
	switch e := e.(type) {
	case actors.BatchDone:
		m.rows.WithLabelValues(p).Add(float64(e.Rows))
		m.batches.WithLabelValues(p).Inc()
		m.batchSeconds.WithLabelValues(p).Observe(e.Duration.Seconds())
	case actors.RowSkipped:
		m.skipped.WithLabelValues(p).Inc()
	case actors.SweepDone:
		m.sweeps.WithLabelValues(p, string(e.Reason)).Inc()
		if e.Reason == actors.Elsewhere {
			m.lockDenials.WithLabelValues(p).Inc()
		}
		if e.Reason.Succeeded() {
			m.lastSuccess.WithLabelValues(p).Set(float64(e.At.Unix()))
			m.drift.WithLabelValues(p).Set(0)
		}
	case actors.PartitionEvent:
		m.partitionEvent(p, e)
	case actors.PassFailed:
		m.failures.WithLabelValues(p).Inc()
	case actors.PassRestarted:
		m.restarts.WithLabelValues(p).Inc()
		drift := 0.0
		if e.Class == supervisor.Drift {
			drift = 1
		}
		m.drift.WithLabelValues(p).Set(drift)
	}
	return nil
}
