package pacing

import "time"

// The defaults a zero Config field takes. They are properties of how a database serves
// short transactions, not of one workload, which is why none is a per-pass setting in
// the node's configuration; docs/pacing.md explains each.
const (
	// DefaultMinBatch is the smallest batch: below it the fixed cost of a round trip
	// and a commit dominates and the sweep gets nowhere.
	DefaultMinBatch = 10
	// DefaultStartBatch is the first batch's size, before any batch was timed.
	DefaultStartBatch = 50
	// DefaultMaxDelay is the longest pause between two batches.
	DefaultMaxDelay = 2 * time.Second
	// DefaultTargetBatchTime is how long one batch should take: about a short OLTP
	// transaction's own latency, so a foreground query that waits behind a batch waits
	// little.
	DefaultTargetBatchTime = 2 * time.Millisecond
	// DefaultCPUShare is the largest share of wall time the sweep spends inside
	// batches, whatever the rate: the sweep is one serial loop, so this bounds it to
	// that share of one core of the database server. Most OLTP waits on its commits'
	// flushes, which no probe sees well; a batch's deletes write the log those commits
	// flush, so the share is kept low. In the step runs of 2026-12-05
	// (docs/benchmarks.md) a commit-bound load's p99 sat at 1.19-1.44 times idle under
	// 500-row batches busy 10-13% of the time (about 21,000 rows/s), and at 1.09-1.82
	// times under paces busy 15-32% of it (28,000-34,000 rows/s).
	DefaultCPUShare = 0.10
	// DefaultMargin is the share of the idle p99 that the sweep may add to the probe's
	// typical latency before the controller backs off: 0.25 is "the foreground p99
	// within 1.25x of idle".
	DefaultMargin = 0.25
	// DefaultSlack is the least latency the sweep may add, so a sub-millisecond
	// baseline does not turn scheduler jitter into back-offs.
	DefaultSlack = 250 * time.Microsecond
	// DefaultMaxReplicaLag is the replica lag above which the controller backs off,
	// the threshold pt-archiver, gh-ost and Vitess use.
	DefaultMaxReplicaLag = time.Second
	// DefaultEvalEvery is how often the signals are judged and the rate adjusted.
	DefaultEvalEvery = 500 * time.Millisecond
	// DefaultSignalWindow is how far back the probe samples judged at an evaluation
	// reach (never further back than the last cut, so one slow spell cuts once).
	DefaultSignalWindow = 2 * time.Second
	// DefaultBaselineEvery is how often the baseline is re-learned by holding the
	// sweep back. A sweep that stops deleting for a while by itself (waiting for a
	// slot, paused) re-learns it then instead, for free; one that keeps backing off
	// re-learns it early (RelearnAfterCuts).
	DefaultBaselineEvery = 20 * time.Second
	// DefaultBaselineHold is how long the sweep holds back while it re-learns.
	DefaultBaselineHold = time.Second
	// DefaultFirstBaselineHold is the first hold, longer so one noisy second cannot
	// set a baseline the rest of the sweep is measured against.
	DefaultFirstBaselineHold = 2 * time.Second
	// DefaultBaselineHolds is how many holds' probes the baseline pools.
	DefaultBaselineHolds = 3
	// DefaultIdleAfter is how long after a batch ended a probe counts as taken while
	// the sweep is not deleting: long enough for the queries that waited behind the
	// batch to have finished. A stretch of such probes at least BaselineHold long
	// serves as a baseline hold the sweep did not have to make.
	DefaultIdleAfter = 250 * time.Millisecond
	// DefaultRelearnAfter is how long a spell of back-offs, with no healthy evaluation
	// in it, lasts before the controller re-learns its baseline at once: a load that
	// got slower for good looks like harm until the baseline moves with it. A surge of
	// the load looks the same while it lasts, and a baseline learned inside it would
	// let the sweep grow back into the surge, so the spell must outlast the surges
	// worth riding out at the floor (the step test's are 12 s); the scheduled
	// re-learning (BaselineEvery) waits for the spell to end, for the same reason.
	DefaultRelearnAfter = 20 * time.Second
	// DefaultBackoff is the factor a degraded signal multiplies the rate by: TCP's
	// halving, so one cut, half a second after a surge is seen, takes the sweep below
	// half its rate. Slow start makes a deep cut cheap to come back from.
	DefaultBackoff = 0.5
	// DefaultRecoverShare is the share of the rate a spell of cuts began at up to which
	// the rate doubles once the signals are quiet again (TCP's slow-start threshold, at
	// half the window lost from), and past which it grows by RateStep.
	DefaultRecoverShare = 0.5
	// DefaultQuietPeriod is how long after the last cut the signals must stay healthy
	// before slow start begins: long enough that the tail of a surge does not double
	// the rate into it, short enough to be back near the earlier rate well within 15 s.
	DefaultQuietPeriod = time.Second
	// DefaultStartRate, DefaultMinRate and DefaultRateStep are in rows per second: the
	// rate slow start begins at, the floor a run of cuts stops at, and the additive
	// step once slow start is over.
	DefaultStartRate = 1000
	DefaultMinRate   = 200
	DefaultRateStep  = 2000
	// DefaultMaxBatchWorth caps a batch at this much of the current rate, so a low
	// rate is spent in small, frequent batches rather than rare long ones.
	DefaultMaxBatchWorth = 50 * time.Millisecond
)

// Config bounds and tunes a Controller. The zero value of every field takes the
// default above, so Config{MaxBatch: 500} is a complete configuration.
type Config struct {
	// MinBatch and MaxBatch bound every batch; a pass's BatchSize is its MaxBatch.
	MinBatch, MaxBatch int
	// MinDelay and MaxDelay bound every pause; a pass's BatchDelay is its MinDelay.
	MinDelay, MaxDelay time.Duration
	TargetBatchTime    time.Duration
	CPUShare           float64
	Margin             float64
	Slack              time.Duration
	MaxReplicaLag      time.Duration
	// MaxBusySessions, when above 0, backs the sweep off whenever the workload's busy
	// sessions (their p75 over the signal window) exceed it, whatever their baseline:
	// pt-online-schema-change's --max-load. 0 (the default) sets no such limit.
	MaxBusySessions    int
	EvalEvery          time.Duration
	SignalWindow       time.Duration
	BaselineEvery      time.Duration
	BaselineHold       time.Duration
	FirstBaselineHold  time.Duration
	BaselineHolds      int
	IdleAfter          time.Duration
	RelearnAfter       time.Duration
	Backoff            float64
	RecoverShare       float64
	QuietPeriod        time.Duration
	StartRate, MinRate float64
	RateStep           float64
	MaxBatchWorth      time.Duration
}

// withDefaults fills every zero field, and keeps the bounds consistent (MinBatch never
// above MaxBatch, MinDelay never above MaxDelay).
func (c Config) withDefaults() Config {
	setI := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	setD := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	setF := func(v *float64, d float64) {
		if *v <= 0 {
			*v = d
		}
	}
	setI(&c.MaxBatch, 500)
	setI(&c.MinBatch, DefaultMinBatch)
	c.MinBatch = min(c.MinBatch, c.MaxBatch)
	setD(&c.MaxDelay, DefaultMaxDelay)
	c.MinDelay = min(max(c.MinDelay, 0), c.MaxDelay)
	setD(&c.TargetBatchTime, DefaultTargetBatchTime)
	setF(&c.CPUShare, DefaultCPUShare)
	c.CPUShare = min(c.CPUShare, 1)
	setF(&c.Margin, DefaultMargin)
	setD(&c.Slack, DefaultSlack)
	setD(&c.MaxReplicaLag, DefaultMaxReplicaLag)
	setD(&c.EvalEvery, DefaultEvalEvery)
	setD(&c.SignalWindow, DefaultSignalWindow)
	setD(&c.BaselineEvery, DefaultBaselineEvery)
	setD(&c.BaselineHold, DefaultBaselineHold)
	setD(&c.FirstBaselineHold, DefaultFirstBaselineHold)
	setI(&c.BaselineHolds, DefaultBaselineHolds)
	setD(&c.IdleAfter, DefaultIdleAfter)
	setD(&c.RelearnAfter, DefaultRelearnAfter)
	setF(&c.Backoff, DefaultBackoff)
	c.Backoff = min(c.Backoff, 0.99)
	setF(&c.RecoverShare, DefaultRecoverShare)
	c.RecoverShare = min(c.RecoverShare, 1)
	setD(&c.QuietPeriod, DefaultQuietPeriod)
	setF(&c.StartRate, DefaultStartRate)
	setF(&c.MinRate, DefaultMinRate)
	setF(&c.RateStep, DefaultRateStep)
	setD(&c.MaxBatchWorth, DefaultMaxBatchWorth)
	return c
}
