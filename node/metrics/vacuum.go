package metrics

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// VacuumCollector reports, per table pass on PostgreSQL, the dead rows its table holds
// and when autovacuum last ran on it, from the server's cumulative statistics: a big
// drain leaves dead rows that only a vacuum reclaims, and these show whether autovacuum
// keeps up or vacuum_after is wanted. SQLite tables show no sample. Reads are cached for
// MaxAge, like the backlog's.
type VacuumCollector struct {
	tables []Table
	// MaxAge is how long a reading is served before the next scrape reads again.
	MaxAge time.Duration

	dead, autovacuum, analyze *prometheus.Desc

	mu      sync.Mutex
	at      time.Time
	samples []prometheus.Metric
}

// NewVacuumCollector reads the statistics of tables.
func NewVacuumCollector(tables []Table) *VacuumCollector {
	pass := []string{"pass"}
	return &VacuumCollector{
		tables: tables, MaxAge: 30 * time.Second,
		dead:       prometheus.NewDesc("retention_table_dead_tuples", "Dead rows in the pass's table (PostgreSQL n_dead_tup): deleted, not yet vacuumed.", pass, nil),
		autovacuum: prometheus.NewDesc("retention_table_last_autovacuum_timestamp_seconds", "Unix time autovacuum last vacuumed the pass's table; 0 for never (since the statistics were reset).", pass, nil),
		analyze:    prometheus.NewDesc("retention_table_last_analyze_timestamp_seconds", "Unix time the pass's table was last analyzed, by hand, by a sweep's hygiene or by autovacuum, whichever is latest; 0 for never.", pass, nil),
	}
}

// Describe sends the descriptions.
func (c *VacuumCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.dead, c.autovacuum, c.analyze} {
		ch <- d
	}
}

// Collect sends the cached samples, reading again when they are stale.
func (c *VacuumCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.at.IsZero() || time.Since(c.at) > c.MaxAge {
		c.samples, c.at = c.read(), time.Now()
	}
	for _, m := range c.samples {
		ch <- m
	}
}

// read queries every table; one whose read fails, or that the statistics do not know,
// shows no sample.
func (c *VacuumCollector) read() []prometheus.Metric {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var out []prometheus.Metric
	for _, t := range c.tables {
		st, ok, err := t.Table.VacuumStats(ctx)
		if err != nil || !ok {
			continue
		}
		name := t.Table.Name()
		analyzed := st.LastAnalyze
		if st.LastAutoanalyze.After(analyzed) {
			analyzed = st.LastAutoanalyze
		}
		out = append(out,
			prometheus.MustNewConstMetric(c.dead, prometheus.GaugeValue, float64(st.DeadTuples), name),
			prometheus.MustNewConstMetric(c.autovacuum, prometheus.GaugeValue, unixOrZero(st.LastAutovacuum), name),
			prometheus.MustNewConstMetric(c.analyze, prometheus.GaugeValue, unixOrZero(analyzed), name))
	}
	return out
}

func unixOrZero(t time.Time) float64 {
	if t.IsZero() {
		return 0
	}
	return float64(t.UnixNano()) / 1e9
}
