package main

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/retentionkit/retention/passes"
)

// backlogCollector reports, per pass, how many rows are waiting (a dry-run count) and
// how old the oldest of them is, so a retention that silently fell behind shows. Both
// are queries, so results are kept for a while instead of running on every scrape.
type backlogCollector struct {
	tables []*passes.Table
	opts   []passes.Options
	maxAge time.Duration

	backlog, oldest *prometheus.Desc

	mu      sync.Mutex
	at      time.Time
	samples []prometheus.Metric
}

func newBacklogCollector(n *node) *backlogCollector {
	c := &backlogCollector{
		tables:  n.tables,
		maxAge:  30 * time.Second,
		backlog: prometheus.NewDesc("retention_backlog_rows", "Rows past their retention, waiting for a sweep (a dry-run count).", []string{"pass"}, nil),
		oldest:  prometheus.NewDesc("retention_oldest_expired_age_seconds", "Age of the oldest row past its retention; 0 when none.", []string{"pass"}, nil),
	}
	for _, r := range n.regs {
		c.opts = append(c.opts, r.Options)
	}
	return c
}

// Describe sends the two descriptions.
func (c *backlogCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.backlog
	ch <- c.oldest
}

// Collect sends the cached samples, refreshing them when they are stale.
func (c *backlogCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if time.Since(c.at) > c.maxAge {
		c.samples, c.at = c.measure(), time.Now()
	}
	for _, m := range c.samples {
		ch <- m
	}
}

func (c *backlogCollector) measure() []prometheus.Metric {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var out []prometheus.Metric
	now := time.Now()
	for i, t := range c.tables {
		if !c.opts[i].Enabled() {
			continue
		}
		cutoff := now.Add(-*c.opts[i].RetentionPeriod)
		if dry, err := t.DryRun(ctx, cutoff); err == nil {
			out = append(out, prometheus.MustNewConstMetric(c.backlog, prometheus.GaugeValue, float64(dry.Eligible), t.Name()))
		}
		if at, ok, err := t.OldestExpired(ctx, cutoff); err == nil {
			age := 0.0
			if ok {
				age = now.Sub(at).Seconds()
			}
			out = append(out, prometheus.MustNewConstMetric(c.oldest, prometheus.GaugeValue, age, t.Name()))
		}
	}
	return out
}
