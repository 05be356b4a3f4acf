package metrics

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/ledger"
)

// Table is a table pass the backlog collector measures.
type Table struct {
	Table   *passes.Table
	Options passes.Options
}

// BacklogRecorder keeps measurements for a history (the ledger's backlog samples, which
// the dashboard charts).
type BacklogRecorder interface {
	RecordBacklog(ctx context.Context, at time.Time, samples map[string]ledger.BacklogSample) error
}

// DefaultRecordEvery is the least time between two measurements a BacklogRecorder keeps.
const DefaultRecordEvery = 5 * time.Minute

// Backlog is one table pass's measurement: Rows, Held and Quarantined are
// passes.Backlog's Deletable, Held and Quarantined, the one definition every reader
// shows (docs/metrics.md, "Backlog, held and quarantined"). A nil field is a query that
// failed, Err says why; ages are zero when there is no such row.
type Backlog struct {
	Pass                    string
	Rows, Held, Quarantined *int64
	OldestAge, OldestHeld   *time.Duration
	Err                     error
}

// BacklogCollector reports, per table pass, the rows a sweep could delete now and how
// old the oldest of them is, and apart from them the rows held (kept by a child with
// on_delete: block) with the age of the oldest, and the rows quarantined, so a drained
// table with a few held rows does not alarm forever while one that fell behind shows.
// All of these are queries, so results are kept for MaxAge instead of running on every
// scrape; the dashboard reads the same cached measurement (Backlog), so its numbers are
// the ones /metrics shows.
type BacklogCollector struct {
	tables []Table
	// MaxAge is how long a measurement is served before the next scrape measures again.
	MaxAge time.Duration
	// Recorder, when set, keeps a measurement at most every RecordEvery
	// (DefaultRecordEvery when zero).
	Recorder    BacklogRecorder
	RecordEvery time.Duration

	backlog, oldest, held, oldestHeld, quarantined *prometheus.Desc

	mu         sync.Mutex
	at         time.Time
	recordedAt time.Time
	measured   []Backlog
}

// NewBacklogCollector measures tables. A table's quarantined rows are those of the
// quarantine it was built with (passes.Table.WithQuarantine).
func NewBacklogCollector(tables []Table) *BacklogCollector {
	pass := []string{"pass"}
	return &BacklogCollector{
		tables: tables, MaxAge: 30 * time.Second,
		backlog:     prometheus.NewDesc("retention_backlog_rows", "Rows past their retention a sweep could delete now (a dry-run count).", pass, nil),
		oldest:      prometheus.NewDesc("retention_oldest_deletable_age_seconds", "Age of the oldest row a sweep could delete; 0 when none. Held rows are left out.", pass, nil),
		held:        prometheus.NewDesc("retention_held_rows", "Rows past their retention a block child keeps (a legal hold); quarantined rows are counted apart.", pass, nil),
		oldestHeld:  prometheus.NewDesc("retention_oldest_held_age_seconds", "Age of the oldest row kept by a block child; 0 when none.", pass, nil),
		quarantined: prometheus.NewDesc("retention_quarantined_rows", "Rows past their retention in quarantine: their delete failed on its own and is retried with backoff.", pass, nil),
	}
}

// Describe sends the descriptions.
func (c *BacklogCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.backlog, c.oldest, c.held, c.oldestHeld, c.quarantined} {
		ch <- d
	}
}

// Collect sends the cached samples, refreshing them when they are stale; a measurement
// that failed shows no sample for that metric (an absent series, rather than a zero
// that would look healthy).
func (c *BacklogCollector) Collect(ch chan<- prometheus.Metric) {
	measured, _ := c.Backlog()
	gauge := func(d *prometheus.Desc, v float64, pass string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, pass)
	}
	for _, b := range measured {
		if b.Quarantined != nil {
			gauge(c.quarantined, float64(*b.Quarantined), b.Pass)
		}
		if b.Rows != nil {
			gauge(c.backlog, float64(*b.Rows), b.Pass)
		}
		if b.Held != nil {
			gauge(c.held, float64(*b.Held), b.Pass)
		}
		if b.OldestAge != nil {
			gauge(c.oldest, b.OldestAge.Seconds(), b.Pass)
		}
		if b.OldestHeld != nil {
			gauge(c.oldestHeld, b.OldestHeld.Seconds(), b.Pass)
		}
	}
}

// Backlog returns the measurement of every enabled table pass and when it was taken,
// measuring first when the cached one is older than MaxAge.
func (c *BacklogCollector) Backlog() ([]Backlog, time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.at.IsZero() || time.Since(c.at) > c.MaxAge {
		c.measured, c.at = c.measure(), time.Now()
		c.record()
	}
	return c.measured, c.at
}

// record hands the measurement to the recorder when the last one it kept is old enough.
func (c *BacklogCollector) record() {
	every := c.RecordEvery
	if every <= 0 {
		every = DefaultRecordEvery
	}
	if c.Recorder == nil || (!c.recordedAt.IsZero() && c.at.Sub(c.recordedAt) < every) {
		return
	}
	samples := map[string]ledger.BacklogSample{}
	for _, b := range c.measured {
		if b.Rows != nil && b.Held != nil && b.Quarantined != nil {
			// The history keeps what a sweep would not delete as one figure.
			samples[b.Pass] = ledger.BacklogSample{Rows: *b.Rows, Held: *b.Held + *b.Quarantined}
		}
	}
	if len(samples) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Recorder.RecordBacklog(ctx, c.at, samples); err == nil {
		c.recordedAt = c.at
	}
}

// measure queries every enabled table.
func (c *BacklogCollector) measure() []Backlog {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	now := time.Now()
	age := func(at time.Time, ok bool) *time.Duration {
		d := time.Duration(0)
		if ok {
			d = now.Sub(at)
		}
		return &d
	}
	var out []Backlog
	for _, t := range c.tables {
		if !t.Options.Enabled() {
			continue
		}
		name, cutoff := t.Table.Name(), t.Options.Cutoff(now)
		b := Backlog{Pass: name}
		var errs []error
		if bl, err := t.Table.Backlog(ctx, cutoff); err == nil {
			b.Rows, b.Held, b.Quarantined = ptr(bl.Deletable), ptr(bl.Held), ptr(bl.Quarantined)
		} else {
			errs = append(errs, err)
		}
		// OldestExpired reads the rows the sweep's own query selects, leaving out rows
		// kept by a block child and rows in the pass's quarantine.
		if at, ok, err := t.Table.OldestExpired(ctx, cutoff); err == nil {
			b.OldestAge = age(at, ok)
		} else {
			errs = append(errs, err)
		}
		if at, ok, err := t.Table.OldestHeld(ctx, cutoff); err == nil {
			b.OldestHeld = age(at, ok)
		} else {
			errs = append(errs, err)
		}
		b.Err = errors.Join(errs...)
		out = append(out, b)
	}
	return out
}

func ptr[T any](v T) *T { return &v }
