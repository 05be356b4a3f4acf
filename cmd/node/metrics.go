package main

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/supervisor"
)

// metrics is an observer that turns events into Prometheus metrics, so a retention that
// silently stopped working shows on a dashboard.
type metrics struct {
	rows, skipped, batches *prometheus.CounterVec
	sweeps                 *prometheus.CounterVec
	failures, restarts     *prometheus.CounterVec
	batchSeconds           *prometheus.HistogramVec
	lastSuccess            *prometheus.GaugeVec
	consecutiveFailures    *prometheus.GaugeVec
	drift                  *prometheus.GaugeVec
}

func newMetrics(reg prometheus.Registerer, rt *actors.Runtime) *metrics {
	m := &metrics{
		rows:                prometheus.NewCounterVec(prometheus.CounterOpts{Name: "retention_rows_deleted_total", Help: "Rows deleted."}, []string{"pass"}),
		skipped:             prometheus.NewCounterVec(prometheus.CounterOpts{Name: "retention_rows_skipped_total", Help: "Rows left in place because deleting them failed."}, []string{"pass"}),
		batches:             prometheus.NewCounterVec(prometheus.CounterOpts{Name: "retention_batches_total", Help: "Batches run."}, []string{"pass"}),
		sweeps:              prometheus.NewCounterVec(prometheus.CounterOpts{Name: "retention_sweeps_total", Help: "Sweeps ended, by outcome."}, []string{"pass", "reason"}),
		failures:            prometheus.NewCounterVec(prometheus.CounterOpts{Name: "retention_failures_total", Help: "Sweeps that failed."}, []string{"pass"}),
		restarts:            prometheus.NewCounterVec(prometheus.CounterOpts{Name: "retention_restarts_total", Help: "Supervised restarts."}, []string{"pass"}),
		batchSeconds:        prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "retention_batch_duration_seconds", Help: "Time one batch took.", Buckets: prometheus.ExponentialBuckets(0.001, 4, 10)}, []string{"pass"}),
		lastSuccess:         prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "retention_last_success_timestamp_seconds", Help: "When the pass last finished a sweep that did not fail."}, []string{"pass"}),
		consecutiveFailures: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "retention_consecutive_failures", Help: "Failed sweeps since the last good one."}, []string{"pass"}),
		drift:               prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "retention_configuration_drift", Help: "1 while the pass's last failure was a table or column missing, until a sweep succeeds."}, []string{"pass"}),
	}
	reg.MustRegister(m.rows, m.skipped, m.batches, m.sweeps, m.failures, m.restarts, m.batchSeconds, m.lastSuccess, m.consecutiveFailures, m.drift)
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "retention_slots_in_use", Help: "Deletes running now, all databases."}, func() float64 {
		total := 0
		for _, s := range rt.Status().Slots {
			total += s.InUse
		}
		return float64(total)
	}))
	return m
}

// Observe updates the metrics from one event.
func (m *metrics) Observe(e actors.Event) error {
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
		if e.Reason.Succeeded() {
			m.lastSuccess.WithLabelValues(p).Set(float64(e.At.Unix()))
			m.consecutiveFailures.WithLabelValues(p).Set(0)
			m.drift.WithLabelValues(p).Set(0)
		}
	case actors.PassFailed:
		m.failures.WithLabelValues(p).Inc()
		m.consecutiveFailures.WithLabelValues(p).Inc()
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
