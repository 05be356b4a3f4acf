package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/retentionkit/retention/actors"
)

// paceCollector reads each pass's pace from the runtime's status on every scrape: for an
// adaptive pass, what the controller chose and what it judged by; for a fixed pass (or
// an adaptive one before its first sweep), zeros, so every series exists from startup
// like the others.
type paceCollector struct {
	rt                                       *actors.Runtime
	batch, delay, rate, probe, baseline, lag *prometheus.Desc
	busy, busyBaseline                       *prometheus.Desc
	backingOff, cuts                         *prometheus.Desc
}

func newPaceCollector(rt *actors.Runtime) *paceCollector {
	pass := []string{"pass"}
	d := func(name, help string) *prometheus.Desc { return prometheus.NewDesc(name, help, pass, nil) }
	return &paceCollector{rt: rt,
		batch:        d("retention_pace_batch_size", "Rows the adaptive controller allows the next batch."),
		delay:        d("retention_pace_delay_seconds", "The pause the adaptive controller chose before the next batch."),
		rate:         d("retention_pace_rate_rows_per_second", "The deletion rate the adaptive controller aims at."),
		probe:        d("retention_pace_probe_seconds", "p75 of the probe query's latency at the controller's last evaluation."),
		baseline:     d("retention_pace_probe_baseline_seconds", "p75 of the probe query's latency while the sweep held back: what the probe is judged against."),
		lag:          d("retention_pace_replica_lag_seconds", "The largest replica lag the controller last read; 0 without replicas."),
		busy:         d("retention_pace_busy_sessions", "p75 of the database's other busy sessions at the controller's last evaluation; 0 where the database shows none."),
		busyBaseline: d("retention_pace_busy_sessions_baseline", "p75 of the database's other busy sessions while the sweep held back: what the busy sessions are judged against."),
		backingOff:   d("retention_pace_backing_off_seconds_total", "Time the controller spent backing off."),
		cuts:         d("retention_pace_backoffs_total", "Multiplicative back-offs of the controller."),
	}
}

// Describe sends the descriptions.
func (c *paceCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.batch, c.delay, c.rate, c.probe, c.baseline, c.lag, c.busy, c.busyBaseline, c.backingOff, c.cuts} {
		ch <- d
	}
}

// Collect sends one sample of each per pass.
func (c *paceCollector) Collect(ch chan<- prometheus.Metric) {
	paces := map[string]*actors.PaceStatus{}
	for _, p := range c.rt.Status().Passes {
		paces[p.Name] = p.Pace
	}
	for _, r := range c.rt.Registrations() {
		s := paces[r.Name]
		if s == nil {
			s = &actors.PaceStatus{}
		}
		name := r.Name
		gauge := func(d *prometheus.Desc, v float64) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, name)
		}
		gauge(c.batch, float64(s.Batch))
		gauge(c.delay, s.Delay.Seconds())
		gauge(c.rate, s.Rate)
		gauge(c.probe, s.Probe.Seconds())
		gauge(c.baseline, s.Baseline.Seconds())
		gauge(c.lag, s.ReplicaLag.Seconds())
		gauge(c.busy, s.Busy)
		gauge(c.busyBaseline, s.BusyBaseline)
		ch <- prometheus.MustNewConstMetric(c.backingOff, prometheus.CounterValue, s.BackingOff.Seconds(), name)
		ch <- prometheus.MustNewConstMetric(c.cuts, prometheus.CounterValue, float64(s.Cuts), name)
	}
}
