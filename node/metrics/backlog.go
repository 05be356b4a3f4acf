package metrics

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/retentionkit/retention/passes"
)

// Table is a table pass the backlog collector measures.
type Table struct {
	Table   *passes.Table
	Options passes.Options
}

// QuarantineCounter counts the rows each pass holds in quarantine (their delete failed
// on its own and is retried with backoff), by pass name. The run ledger provides it; nil
// leaves quarantined rows out of the held count.
type QuarantineCounter interface {
	QuarantineCounts(ctx context.Context) (map[string]int64, error)
}

// BacklogCollector reports, per table pass, the rows a sweep could delete now and how
// old the oldest of them is, and apart from them the rows held (kept by a child with
// on_delete: block, or quarantined) and the age of the oldest held row, so a drained
// table with a few held rows does not alarm forever while one that fell behind shows.
// All of these are queries, so results are kept for MaxAge instead of running on every
// scrape.
type BacklogCollector struct {
	tables     []Table
	quarantine QuarantineCounter
	// MaxAge is how long a measurement is served before the next scrape measures again.
	MaxAge time.Duration

	backlog, oldest, held, oldestHeld, quarantined *prometheus.Desc

	mu      sync.Mutex
	at      time.Time
	samples []prometheus.Metric
}

// NewBacklogCollector measures tables; quarantine may be nil.
func NewBacklogCollector(tables []Table, quarantine QuarantineCounter) *BacklogCollector {
	pass := []string{"pass"}
	return &BacklogCollector{
		tables: tables, quarantine: quarantine, MaxAge: 30 * time.Second,
		backlog:     prometheus.NewDesc("retention_backlog_rows", "Rows past their retention a sweep could delete now (a dry-run count).", pass, nil),
		oldest:      prometheus.NewDesc("retention_oldest_deletable_age_seconds", "Age of the oldest row a sweep could delete; 0 when none. Held rows are left out.", pass, nil),
		held:        prometheus.NewDesc("retention_held_rows", "Rows past their retention a sweep will not delete: kept by a block child or quarantined.", pass, nil),
		oldestHeld:  prometheus.NewDesc("retention_oldest_held_age_seconds", "Age of the oldest row kept by a block child; 0 when none.", pass, nil),
		quarantined: prometheus.NewDesc("retention_quarantined_rows", "Rows in quarantine: their delete failed on its own and is retried with backoff.", pass, nil),
	}
}

// Describe sends the descriptions.
func (c *BacklogCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.backlog, c.oldest, c.held, c.oldestHeld, c.quarantined} {
		ch <- d
	}
}

// Collect sends the cached samples, refreshing them when they are stale.
func (c *BacklogCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.at.IsZero() || time.Since(c.at) > c.MaxAge {
		c.samples, c.at = c.measure(), time.Now()
	}
	for _, m := range c.samples {
		ch <- m
	}
}

// measure queries every enabled table; a table whose query fails shows no sample for that
// metric (an absent series, rather than a zero that would look healthy).
func (c *BacklogCollector) measure() []prometheus.Metric {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	quarantined, counted := map[string]int64{}, true // no quarantine: none is held there
	if c.quarantine != nil {
		q, err := c.quarantine.QuarantineCounts(ctx)
		quarantined, counted = q, err == nil
	}
	var out []prometheus.Metric
	gauge := func(d *prometheus.Desc, v float64, pass string) {
		out = append(out, prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, pass))
	}
	age := func(at time.Time, ok bool, now time.Time) float64 {
		if !ok {
			return 0
		}
		return now.Sub(at).Seconds()
	}
	now := time.Now()
	for _, t := range c.tables {
		if !t.Options.Enabled() {
			continue
		}
		name, cutoff := t.Table.Name(), now.Add(-*t.Options.RetentionPeriod)
		if counted {
			gauge(c.quarantined, float64(quarantined[name]), name)
		}
		if dry, err := t.Table.DryRun(ctx, cutoff); err == nil {
			// Quarantined rows are eligible to the dry run but held: they count there.
			gauge(c.backlog, float64(max(dry.Eligible-quarantined[name], 0)), name)
			gauge(c.held, float64(dry.Blocked+quarantined[name]), name)
		}
		// OldestExpired reads the rows the sweep's own query selects, leaving out rows
		// kept by a block child and rows in the pass's quarantine.
		if at, ok, err := t.Table.OldestExpired(ctx, cutoff); err == nil {
			gauge(c.oldest, age(at, ok, now), name)
		}
		if at, ok, err := t.Table.OldestHeld(ctx, cutoff); err == nil {
			gauge(c.oldestHeld, age(at, ok, now), name)
		}
	}
	return out
}
