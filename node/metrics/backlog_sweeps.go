package metrics

import (
	"context"
	"sync"
	"time"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/core/clock"
	"github.com/retentionkit/retention/passes/ledger"
)

// DefaultSweepSampleEvery is the least time between two samples of one pass that its
// sweeps' ends keep: a pass sweeping every second would otherwise keep 172,800 samples in
// the 48 hours the ledger holds them.
const DefaultSweepSampleEvery = 10 * time.Second

// SweepSampler keeps a backlog sample of a table pass when it starts (the backlog its
// first sweep will find) and at the end of each of its sweeps, so the backlog chart
// fills while the node runs even when nobody scrapes /metrics or opens the dashboard.
// A pass is measured at most every `every`: a sweep ending sooner after the last
// measurement is measured once that has passed, not dropped. A sample equal to the
// pass's last one is kept only when that one is DefaultRecordEvery old, so a drained
// pass sweeping every 15s keeps one every 5 minutes, not 11,520 identical ones in 48
// hours. It is an actors.Observer: the runtime's observer hub tells it of every event,
// and it measures on a goroutine of its own so a slow query never holds up the events
// of other passes.
type SweepSampler struct {
	c     *BacklogCollector
	every time.Duration
	clock clock.Clock

	mu      sync.Mutex
	pending map[string]bool
	last    map[string]time.Time  // when each pass was last measured
	kept    map[string]keptSample // each pass's last sample kept (the loop's alone)
	counts  map[string]int        // measurements per pass
	wake    chan struct{}
}

// SampleSweeps returns the observer that keeps c's measurement of a table pass at its
// start and at each of its sweeps' ends in c.Recorder, measuring until ctx ends. every <=
// 0 is DefaultSweepSampleEvery; clk times the floor and the samples (nil: the wall
// clock). With no Recorder it keeps nothing.
func (c *BacklogCollector) SampleSweeps(ctx context.Context, every time.Duration, clk clock.Clock) *SweepSampler {
	if every <= 0 {
		every = DefaultSweepSampleEvery
	}
	s := &SweepSampler{c: c, every: every, clock: clock.OrReal(clk), pending: map[string]bool{}, last: map[string]time.Time{}, kept: map[string]keptSample{}, counts: map[string]int{}, wake: make(chan struct{}, 1)}
	go s.loop(ctx)
	return s
}

// Observe notes a table pass's start (the backlog before its first sweep) and the end
// of each of its sweeps; the loop measures it.
func (s *SweepSampler) Observe(e actors.Event) error {
	var name string
	switch e := e.(type) {
	case actors.PassStarted:
		name = e.Name
	case actors.SweepDone:
		name = e.Name
	default:
		return nil
	}
	if s.c.Recorder == nil || s.table(name) == nil {
		return nil
	}
	s.mu.Lock()
	s.pending[name] = true
	s.mu.Unlock()
	s.poke()
	return nil
}

func (s *SweepSampler) table(name string) *Table {
	for i := range s.c.tables {
		if s.c.tables[i].Table.Name() == name {
			return &s.c.tables[i]
		}
	}
	return nil
}

func (s *SweepSampler) loop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.wake:
		}
		names, later := s.due()
		for _, name := range names {
			s.sample(ctx, name)
		}
		if later > 0 {
			// A sweep that ended too soon after the pass's last sample is measured when
			// the floor allows, not dropped: its backlog is the point the chart needs.
			s.clock.AfterFunc(later, s.poke)
		}
	}
}

func (s *SweepSampler) poke() {
	select {
	case s.wake <- struct{}{}:
	default: // a wake-up is already due
	}
}

// due takes the pending passes whose last measurement is at least every old, and says
// how long until the first of the others is due (0: none left pending).
func (s *SweepSampler) due() ([]string, time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock.Now()
	var out []string
	var later time.Duration
	for name := range s.pending {
		if last, ok := s.last[name]; ok && now.Sub(last) < s.every {
			wait := s.every - now.Sub(last)
			if later == 0 || wait < later {
				later = wait
			}
			continue
		}
		out = append(out, name)
		s.last[name] = now
		delete(s.pending, name)
	}
	return out, later
}

// sample measures one pass, with the collector's own measurement (the same definition
// of backlog and held /metrics shows), and records it.
func (s *SweepSampler) sample(ctx context.Context, name string) {
	t := s.table(name)
	one := &BacklogCollector{tables: []Table{*t}}
	measured := one.measure()
	if len(measured) != 1 || measured[0].Rows == nil || measured[0].Held == nil {
		return // a measurement that failed is a gap in the chart, not a zero
	}
	defer s.count(name)
	b, now := measured[0], s.clock.Now()
	sample := ledger.BacklogSample{Rows: *b.Rows, Held: *b.Held}
	if k, ok := s.kept[name]; ok && k.sample == sample && now.Sub(k.at) < DefaultRecordEvery {
		return // the chart already has this value; its line runs on to the next change
	}
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := s.c.Recorder.RecordBacklog(rctx, now, map[string]ledger.BacklogSample{name: sample}); err == nil {
		s.kept[name] = keptSample{sample: sample, at: now}
	}
}

func (s *SweepSampler) count(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.counts[name]++
}

// Measured says how many sweep ends of pass were measured (kept or not), so a caller
// can tell a sample left out as unchanged from one not yet taken.
func (s *SweepSampler) Measured(pass string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts[pass]
}

// keptSample is a pass's last sample the recorder kept, and when.
type keptSample struct {
	sample ledger.BacklogSample
	at     time.Time
}
