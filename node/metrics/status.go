package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/node/health"
)

// statusCollector reads the runtime's status on every scrape: the slots in use, each
// pass's settings and whether it is degraded, and why. It queries no database.
type statusCollector struct {
	rt        *actors.Runtime
	threshold int

	slots, retention, interval, degraded, consecutive *prometheus.Desc
	paused, batchSize, batchDelay                     *prometheus.Desc
}

func newStatusCollector(rt *actors.Runtime, threshold int) *statusCollector {
	pass := []string{"pass"}
	return &statusCollector{
		rt: rt, threshold: threshold,
		slots:     prometheus.NewDesc("retention_slots_in_use", "Deletes running now, all databases.", nil, nil),
		retention: prometheus.NewDesc("retention_pass_retention_seconds", "The pass's retention period; 0 for a disabled pass.", pass, nil),
		interval:  prometheus.NewDesc("retention_pass_interval_seconds", "The pass's effective interval between sweeps.", pass, nil),
		degraded:  prometheus.NewDesc("retention_pass_degraded", "1 while the pass makes the node degraded for reason, else 0.", []string{"pass", "reason"}, nil),
		// From the status, not counted from events, so it reads what /readyz reads (a
		// revived pass starts again from 0).
		consecutive: prometheus.NewDesc("retention_consecutive_failures", "Failed sweeps since the last good one.", pass, nil),
		paused:      prometheus.NewDesc("retention_pass_paused", "1 while an operator has paused the pass (retention pause), else 0.", pass, nil),
		batchSize:   prometheus.NewDesc("retention_pass_setting_batch_size", "The batch size in force: the file's, or a live setting.", pass, nil),
		batchDelay:  prometheus.NewDesc("retention_pass_setting_batch_delay_seconds", "The pause between batches in force: the file's, or a live setting.", pass, nil),
	}
}

// Describe sends the descriptions.
func (c *statusCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.slots, c.retention, c.interval, c.degraded, c.consecutive, c.paused, c.batchSize, c.batchDelay} {
		ch <- d
	}
}

// Collect sends one sample of each, from a fresh status.
func (c *statusCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.rt.Status()
	inUse := 0
	for _, s := range st.Slots {
		inUse += s.InUse
	}
	ch <- prometheus.MustNewConstMetric(c.slots, prometheus.GaugeValue, float64(inUse))
	byName := map[string]actors.PassStatus{}
	for _, p := range st.Passes {
		byName[p.Name] = p
	}
	for _, r := range c.rt.Registrations() {
		retention := 0.0
		if r.Options.RetentionPeriod != nil {
			retention = r.Options.RetentionPeriod.Seconds()
		}
		ch <- prometheus.MustNewConstMetric(c.retention, prometheus.GaugeValue, retention, r.Name)
		// Before Start the status lists no pass: a pass with no status yet is healthy,
		// and runs with its registration's pace.
		p, ok := byName[r.Name]
		if !ok {
			p = actors.PassStatus{Name: r.Name, BatchSize: r.Options.BatchSize, BatchDelay: r.Options.BatchDelay, SweepInterval: r.Options.SweepInterval}
		}
		inForce := r.Options
		inForce.SweepInterval = p.SweepInterval
		ch <- prometheus.MustNewConstMetric(c.interval, prometheus.GaugeValue, inForce.EffectiveInterval().Seconds(), r.Name)
		ch <- prometheus.MustNewConstMetric(c.paused, prometheus.GaugeValue, boolValue(p.Paused), r.Name)
		ch <- prometheus.MustNewConstMetric(c.batchSize, prometheus.GaugeValue, float64(p.BatchSize), r.Name)
		ch <- prometheus.MustNewConstMetric(c.batchDelay, prometheus.GaugeValue, p.BatchDelay.Seconds(), r.Name)
		ch <- prometheus.MustNewConstMetric(c.consecutive, prometheus.GaugeValue, float64(p.ConsecutiveFailures), r.Name)
		c.degradedSamples(ch, p)
	}
}

// degradedSamples sends retention_pass_degraded for every reason, 1 for the reasons the
// pass is degraded for now.
func (c *statusCollector) degradedSamples(ch chan<- prometheus.Metric, p actors.PassStatus) {
	now := map[health.Reason]bool{}
	for _, pr := range health.PassProblems(p, c.threshold) {
		now[pr.Reason] = true
	}
	for _, r := range health.Reasons() {
		v := 0.0
		if now[r] {
			v = 1
		}
		ch <- prometheus.MustNewConstMetric(c.degraded, prometheus.GaugeValue, v, p.Name, string(r))
	}
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
