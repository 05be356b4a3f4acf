package pacing

import (
	"fmt"
	"time"
)

// baselineSignal is one measure the controller is paced by (the read probe's latency,
// the commit probe's, the workload's busy sessions): its samples outside holds, the
// holds' samples it learned its baseline from, and that baseline. Each has its own,
// since a commit waits for a WAL flush a read never waits for, and a count of sessions
// has nothing in common with either. Samples are numbers in the signal's own unit
// (nanoseconds for a latency, sessions for a count); format writes one for a log line.
type baselineSignal struct {
	reason Reason
	name   string
	// slack is the least rise over the baseline judged as harm, in the signal's unit;
	// 0 takes Config.Slack (a latency).
	slack float64
	// ceiling, when above 0, is a bound the signal's p75 may not pass whatever its
	// baseline (Config.MaxBusySessions): a server busy when the baseline was learned
	// would otherwise take that business as normal.
	ceiling float64
	format  func(float64) string

	probes   []sample    // outside holds, newest last
	holds    [][]float64 // the samples of the last BaselineHolds holds
	cur      []float64   // the samples of the hold in progress
	idle     []sample    // samples taken since the last batch, once IdleAfter passed
	baseline float64     // the signal's typical value while not deleting
	tail     float64     // and its p99: how far the foreground's own tail reaches
	last     float64     // its p75 at the last evaluation that judged it
	seen     bool        // a sample ever arrived: holds are worth their time
}

// newLatencySignal is a signal of latencies, judged with Config.Slack.
func newLatencySignal(reason Reason, name string) baselineSignal {
	return baselineSignal{reason: reason, name: name, format: func(v float64) string { return time.Duration(v).String() }}
}

// idleUntil returns the values of the idle samples taken no later than end.
func (s *baselineSignal) idleUntil(end time.Time) []float64 {
	var out []float64
	for _, x := range s.idle {
		if !x.at.After(end) {
			out = append(out, x.v)
		}
	}
	return out
}

// since returns the values of the samples taken after since.
func (s *baselineSignal) since(since time.Time) []float64 {
	var out []float64
	for _, x := range s.probes {
		if x.at.After(since) {
			out = append(out, x.v)
		}
	}
	return out
}

// learn makes samples, taken while the sweep deleted nothing, the newest hold's; the
// baseline is the p75 of the last holds' pooled (and their p99 its tail). Too few samples
// to learn from keep the baseline there is; it reports whether it learned.
func (s *baselineSignal) learn(samples []float64, holds int) bool {
	if len(samples) < 3 {
		return false
	}
	s.holds = append(s.holds, samples)
	if len(s.holds) > holds {
		s.holds = s.holds[len(s.holds)-holds:]
	}
	var pooled []float64
	for _, h := range s.holds {
		pooled = append(pooled, h...)
	}
	s.baseline, s.tail = quantile(pooled, probeQuantile), quantile(pooled, 0.99)
	return true
}

// learned reports whether the signal has a baseline to be judged against. A count's
// baseline may be zero (no other session was busy), a latency's never is.
func (s *baselineSignal) learned() bool { return len(s.holds) > 0 }

// judge returns the signal's degradation when its p75 since since is over its limit;
// the zero one when it is within it, has no baseline, or has too few samples to tell.
func (s *baselineSignal) judge(since time.Time, cfg Config) degradation {
	recent := s.since(since)
	if !s.learned() || len(recent) < 3 {
		return degradation{}
	}
	s.last = quantile(recent, probeQuantile)
	if limit := s.limit(cfg); s.last > limit {
		return degradation{s.reason, fmt.Sprintf("%s p75 %s over %s (baseline p75 %s, p99 %s)", s.name, s.format(s.last), s.format(limit), s.format(s.baseline), s.format(s.tail)), s.last / limit}
	}
	return degradation{}
}

// overCeiling judges the samples since since against the signal's ceiling alone (none:
// never over), with or without a baseline.
func (s *baselineSignal) overCeiling(since time.Time) degradation {
	recent := s.since(since)
	if s.ceiling <= 0 || len(recent) < 3 {
		return degradation{}
	}
	p75 := quantile(recent, probeQuantile)
	if p75 <= s.ceiling {
		return degradation{}
	}
	s.last = p75
	return degradation{s.reason, fmt.Sprintf("%s p75 %s over the limit of %s", s.name, s.format(p75), s.format(s.ceiling)), p75 / s.ceiling}
}

// limit is the signal's p75 above which the sweep is taken to hurt. A foreground p99
// within 1 + Margin of idle tolerates Margin x that p99 of added latency, so the typical
// probe may rise by Margin x the baseline's p99 (at least the slack). Where the idle tail
// is tight this is about Margin above the baseline; on a server whose tail is long by
// itself (a shared machine, a slow disk), it lets the sweep add what the foreground's
// p99 cannot tell from its own noise.
func (s *baselineSignal) limit(cfg Config) float64 {
	slack := s.slack
	if slack <= 0 {
		slack = float64(cfg.Slack)
	}
	tail := s.tail
	if s.baseline > 0 {
		tail = min(tail, maxTailOverBaseline*s.baseline)
	}
	return s.baseline + max(cfg.Margin*tail, slack)
}

// duration is a latency signal's value as a time.Duration.
func duration(v float64) time.Duration { return time.Duration(v) }
