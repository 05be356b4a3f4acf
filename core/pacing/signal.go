package pacing

import (
	"fmt"
	"time"
)

// latencySignal is one probe the controller is paced by (the read probe, the commit
// probe): its samples outside holds, the holds' samples it learned its baseline from,
// and that baseline. Each probe has its own, since a commit waits for a WAL flush a read
// never waits for, and their latencies have nothing in common.
type latencySignal struct {
	reason Reason
	name   string

	probes   []sample          // outside holds, newest last
	holds    [][]time.Duration // the probes of the last BaselineHolds holds
	cur      []time.Duration   // the probes of the hold in progress
	idle     []sample          // probes taken since the last batch, once IdleAfter passed
	baseline time.Duration     // the probe's typical latency while not deleting
	tail     time.Duration     // and its p99: how far the foreground's own tail reaches
	last     time.Duration     // its p75 at the last evaluation that judged it
	seen     bool              // a sample ever arrived: holds are worth their time
}

// idleUntil returns the latencies of the idle probes taken no later than end.
func (s *latencySignal) idleUntil(end time.Time) []time.Duration {
	var out []time.Duration
	for _, x := range s.idle {
		if !x.at.After(end) {
			out = append(out, x.lat)
		}
	}
	return out
}

// since returns the latencies of the probes taken after since.
func (s *latencySignal) since(since time.Time) []time.Duration {
	var out []time.Duration
	for _, x := range s.probes {
		if x.at.After(since) {
			out = append(out, x.lat)
		}
	}
	return out
}

// learn makes probes, taken while the sweep deleted nothing, the newest hold's; the
// baseline is the p75 of the last holds' pooled (and their p99 its tail). Too few probes
// to learn from keep the baseline there is; it reports whether it learned.
func (s *latencySignal) learn(probes []time.Duration, holds int) bool {
	if len(probes) < 3 {
		return false
	}
	s.holds = append(s.holds, probes)
	if len(s.holds) > holds {
		s.holds = s.holds[len(s.holds)-holds:]
	}
	var pooled []time.Duration
	for _, h := range s.holds {
		pooled = append(pooled, h...)
	}
	s.baseline, s.tail = quantile(pooled, probeQuantile), quantile(pooled, 0.99)
	return true
}

// judge returns the signal's reason, with the numbers, when its p75 since since is over
// its limit; "" when it is within it, has no baseline, or has too few samples to tell.
func (s *latencySignal) judge(since time.Time, cfg Config) (Reason, string) {
	recent := s.since(since)
	if s.baseline <= 0 || len(recent) < 3 {
		return "", ""
	}
	s.last = quantile(recent, probeQuantile)
	if limit := s.limit(cfg); s.last > limit {
		return s.reason, fmt.Sprintf("%s p75 %v over %v (baseline p75 %v, p99 %v)", s.name, s.last, limit, s.baseline, s.tail)
	}
	return "", ""
}

// limit is the probe's p75 above which the sweep is taken to hurt. A foreground p99
// within 1 + Margin of idle tolerates Margin x that p99 of added latency, so the typical
// probe may rise by Margin x the baseline's p99 (at least Slack). Where the idle tail is
// tight this is about Margin above the baseline; on a server whose tail is long by
// itself (a shared machine, a slow disk), it lets the sweep add what the foreground's
// p99 cannot tell from its own noise.
func (s *latencySignal) limit(cfg Config) time.Duration {
	tail := min(s.tail, maxTailOverBaseline*s.baseline)
	return s.baseline + max(time.Duration(cfg.Margin*float64(tail)), cfg.Slack)
}
