package pacing

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"
)

// Reason says why the pace changed.
type Reason string

// The reasons a Change carries.
const (
	// ReasonBaseline: the first baseline was learned; the sweep starts deleting.
	ReasonBaseline Reason = "baseline"
	// ReasonProbe: the probe's p75 rose over its threshold above the baseline.
	ReasonProbe Reason = "probe"
	// ReasonCommit: the commit probe's p75 rose over its threshold above its baseline:
	// the sweep (or a surge of the load) delays the commits the workload waits for.
	ReasonCommit Reason = "commit"
	// ReasonLoad: the workload's busy sessions rose over their threshold above their
	// baseline: the load surged (a sweep gives way to it) or the sweep slows it down.
	ReasonLoad Reason = "load"
	// ReasonBlocking: the sweep's backend blocked other sessions.
	ReasonBlocking Reason = "blocking"
	// ReasonReplicaLag: a replica lagged more than MaxReplicaLag.
	ReasonReplicaLag Reason = "replica_lag"
	// ReasonRecovered: every signal is healthy again after a back-off.
	ReasonRecovered Reason = "recovered"
)

// Mode is what the controller is doing.
type Mode string

// The modes a State reports.
const (
	// ModeLearning: the sweep holds back while the baseline is (re-)learned.
	ModeLearning Mode = "learning"
	// ModeGrowing: the signals are healthy and the rate grows.
	ModeGrowing Mode = "growing"
	// ModeBackingOff: a signal degraded; the rate is being cut until all are healthy.
	ModeBackingOff Mode = "backing_off"
)

// Change is a change of mode worth telling an operator about: a back-off with the
// signal that caused it, a recovery, the first baseline.
type Change struct {
	Reason Reason
	// Detail says it with the numbers, for a log line.
	Detail string
}

// Decision is the pace of the next batch.
type Decision struct {
	// Batch is how many rows the next batch may delete, within [MinBatch, MaxBatch].
	Batch int
	// Delay is the pause before it, within [MinDelay, MaxDelay].
	Delay time.Duration
	// Change is set when the mode changed since the last decision.
	Change *Change
}

// State is a snapshot of the controller, for status pages and metrics.
type State struct {
	Mode  Mode
	Batch int
	Delay time.Duration
	// Rate is the deletion rate the controller aims at, in rows per second.
	Rate float64
	// Baseline is the probe's p75 while the sweep held back; Probe its p75 at the last
	// evaluation. Both are zero until measured.
	Baseline, Probe time.Duration
	// CommitBaseline and Commit are the same for the commit probe; zero where the
	// database has none.
	CommitBaseline, Commit time.Duration
	// BusyBaseline and Busy are the same for the workload's busy sessions (a p75 of
	// counts); zero where the database shows none.
	BusyBaseline, Busy float64
	ReplicaLag         time.Duration
	Blocked            int
	// BackingOff is the total time spent backing off, the current spell included.
	BackingOff time.Duration
	// Cuts counts the multiplicative back-offs.
	Cuts int
	// Last is the reason of the last change.
	Last Reason
}

type batchSample struct {
	rows int
	took time.Duration
}

// maxIdleProbes bounds the probes kept from a wait between two batches.
const maxIdleProbes = 100

type sample struct {
	at time.Time
	v  float64
}

// Controller chooses the size of each batch and the pause before it; see the package
// documentation. Build one with New; feed it the samples the sweep measures and ask
// Next before every batch.
type Controller struct {
	cfg Config

	rate      float64
	slowStart bool
	batch     int
	delay     time.Duration
	lastTook  time.Duration
	idleFrom  time.Time     // IdleAfter past the last batch's end, or the last idle baseline
	samples   []batchSample // the last batches' sizes and times
	paused    time.Duration // the pause chosen before the next batch (0 after a hold)
	// When the next batch was due (the last decision plus its pause), and how much later
	// than that batches start on average: the round trips between one batch's end and the
	// next one's start, which are part of the pause as far as the server is concerned.
	dueAt    time.Time
	overhead time.Duration
	// What the sweep delivered since the last evaluation: rows, and the time its batches,
	// their pauses and the overhead between them took (holds and waits left out).
	winRows int
	winTime time.Duration

	// The signals judged against a baseline, each its own: the read probe, the commit
	// probe and the workload's busy sessions.
	read, commit, busy baselineSignal
	holding            bool
	holdEnd            time.Time
	baselineAt         time.Time
	// ssthresh is where slow start after a back-off hands over to additive growth (TCP's
	// slow-start threshold): a share of the rate the spell of cuts began at; 0 before
	// the first cut, when slow start runs until a signal degrades.
	ssthresh float64

	lastEval, lastCut time.Time
	blocked           int
	blockedAt         time.Time
	lag               time.Duration
	lagAt             time.Time

	mode         Mode
	backingSince time.Time
	backingTotal time.Duration
	cuts         int
	streak       int       // back-offs since the last healthy evaluation
	streakSince  time.Time // when the first of them was made
	last         Reason
	pending      *Change
}

// New returns a controller that has learned nothing yet: its first sweep starts with a
// baseline hold (see StartSweep).
func New(cfg Config) *Controller {
	cfg = cfg.withDefaults()
	c := &Controller{cfg: cfg, rate: cfg.StartRate, slowStart: true, mode: ModeGrowing,
		read: newLatencySignal(ReasonProbe, "probe"), commit: newLatencySignal(ReasonCommit, "commit probe"),
		busy: baselineSignal{reason: ReasonLoad, name: "busy sessions", slack: busySlack, ceiling: float64(max(cfg.MaxBusySessions, 0)),
			format: func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }}}
	c.batch = clamp(DefaultStartBatch, cfg.MinBatch, cfg.MaxBatch)
	c.delay = cfg.MinDelay
	return c
}

// Config returns the configuration with its defaults filled in.
func (c *Controller) Config() Config { return c.cfg }

// SetBounds replaces the batch and delay bounds (a pass's BatchSize and BatchDelay
// changed at run time); the current pace is brought inside them at the next decision.
func (c *Controller) SetBounds(minBatch, maxBatch int, minDelay time.Duration) {
	cfg := c.cfg
	cfg.MinBatch, cfg.MaxBatch, cfg.MinDelay = minBatch, maxBatch, minDelay
	c.cfg = cfg.withDefaults()
}

// StartSweep tells the controller a sweep starts at now. Without a baseline, or with
// one older than BaselineEvery, the sweep begins by holding back to learn one.
func (c *Controller) StartSweep(now time.Time) {
	if c.holding {
		return
	}
	switch {
	case c.baselineAt.IsZero():
		c.startHold(now, c.cfg.FirstBaselineHold)
	case c.sawProbe() && now.Sub(c.baselineAt) >= c.cfg.BaselineEvery:
		c.startHold(now, c.cfg.BaselineHold)
	}
}

// Probe records one probe's latency, measured when it ended at at.
func (c *Controller) Probe(at time.Time, latency time.Duration) {
	c.record(&c.read, at, float64(latency))
}

// Commit records one commit probe's latency (a write and its commit, as the workload's
// transactions end), measured when it ended at at. Most OLTP waits on its commits'
// flushes, which a read probe never does, so a sweep that delays them shows here first.
func (c *Controller) Commit(at time.Time, latency time.Duration) {
	c.record(&c.commit, at, float64(latency))
}

// Busy records how many of the workload's sessions were busy (inside a statement or a
// transaction) at at, the sweep's own left out. A surge of the load shows here within a
// sample, whatever its queries wait on, and so does a sweep that slows the load down:
// its transactions take longer, so more of them are open at once (Little's law).
func (c *Controller) Busy(at time.Time, sessions int) { c.record(&c.busy, at, float64(sessions)) }

// busySlack is the least rise of the busy sessions' p75 judged: one session, so a
// workload that is mostly idle is not cut for a second query arriving.
const busySlack = 1

// signals are the signals judged against a baseline, in the order they are judged.
func (c *Controller) signals() []*baselineSignal {
	return []*baselineSignal{&c.read, &c.commit, &c.busy}
}

func (c *Controller) record(s *baselineSignal, at time.Time, v float64) {
	s.seen = true
	if c.holding {
		s.cur = append(s.cur, v)
		return
	}
	if !c.idleFrom.IsZero() && !at.Before(c.idleFrom) {
		// A long wait (a paused pass) keeps its newest probes, enough for a baseline.
		if len(s.idle) >= maxIdleProbes {
			s.idle = slices.Delete(s.idle, 0, 1)
		}
		s.idle = append(s.idle, sample{at, v})
	}
	s.probes = append(s.probes, sample{at, v})
	if keep := at.Add(-2 * c.cfg.SignalWindow); len(s.probes) > 0 && s.probes[0].at.Before(keep) {
		i := slices.IndexFunc(s.probes, func(x sample) bool { return !x.at.Before(keep) })
		if i < 0 {
			i = len(s.probes)
		}
		s.probes = slices.Delete(s.probes, 0, i)
	}
}

// Blocked records how many sessions the sweep's backend blocked at at.
func (c *Controller) Blocked(at time.Time, n int) { c.blocked, c.blockedAt = n, at }

// ReplicaLag records the largest replica lag seen at at.
func (c *Controller) ReplicaLag(at time.Time, lag time.Duration) { c.lag, c.lagAt = lag, at }

// Batch records that a batch of rows rows took took, ending at at.
func (c *Controller) Batch(at time.Time, rows int, took time.Duration) {
	if rows <= 0 || took <= 0 {
		return
	}
	// The stretch before the batch, when nothing was deleted, is a baseline hold that
	// happened by itself: a hold that ran long (the sweep waited for a slot after it),
	// or a wait with no hold at all.
	start := at.Add(-took)
	late := c.learnOverhead(start)
	if c.holding && !start.Before(c.holdEnd) {
		c.finishHold(start)
	} else if !c.holding {
		c.learnIdle(start)
	}
	for _, s := range c.signals() {
		s.idle = nil
	}
	c.idleFrom = at.Add(c.cfg.IdleAfter)
	c.lastTook = took
	c.samples = append(c.samples, batchSample{rows, took})
	if len(c.samples) > 20 {
		c.samples = c.samples[1:]
	}
	c.winRows += rows
	c.winTime += took + c.paused + late
}

// Next returns the pace of the next batch at now.
func (c *Controller) Next(now time.Time) Decision {
	if c.holding && !now.Before(c.holdEnd) {
		c.finishHold(now)
	}
	if !c.holding {
		c.learnIdle(now)
		if now.Sub(c.lastEval) >= c.cfg.EvalEvery {
			c.evaluate(now)
		}
		// Neither re-learning runs inside a spell of back-offs shorter than RelearnAfter:
		// a baseline learned in a surge would let the sweep grow back into it.
		stale := c.sawProbe() && now.Sub(c.baselineAt) >= c.cfg.BaselineEvery && c.streak == 0
		stuck := c.streak > 0 && now.Sub(c.streakSince) >= c.cfg.RelearnAfter
		if stale || stuck {
			c.startHold(now, c.cfg.BaselineHold)
		}
	}
	if c.holding {
		c.delay = clampD(c.holdEnd.Sub(now), c.cfg.MinDelay, c.cfg.MaxDelay)
		c.paused = 0 // a hold is not the pace: it does not count in what was delivered
	} else {
		c.batch = c.nextBatch()
		c.delay = c.nextDelay()
		c.paused = c.delay
		c.dueAt = now.Add(c.delay)
	}
	d := Decision{Batch: c.batch, Delay: c.delay, Change: c.pending}
	c.pending = nil
	return d
}

// State returns a snapshot at now.
func (c *Controller) State(now time.Time) State {
	backing := c.backingTotal
	if c.mode == ModeBackingOff {
		backing += now.Sub(c.backingSince)
	}
	mode := c.mode
	if c.holding {
		mode = ModeLearning
	}
	return State{Mode: mode, Batch: c.batch, Delay: c.delay, Rate: c.rate, Baseline: duration(c.read.baseline), Probe: duration(c.read.last),
		CommitBaseline: duration(c.commit.baseline), Commit: duration(c.commit.last), BusyBaseline: c.busy.baseline, Busy: c.busy.last,
		ReplicaLag: c.lag, Blocked: c.blocked, BackingOff: backing, Cuts: c.cuts, Last: c.last}
}

// startHold holds the sweep back for d, never longer than one pause may be, so the
// batch that follows the pause never runs inside the hold.
func (c *Controller) startHold(now time.Time, d time.Duration) {
	c.holding, c.holdEnd = true, now.Add(min(d, c.cfg.MaxDelay))
	for _, s := range c.signals() {
		s.cur = nil
	}
}

// finishHold turns the hold's probes into the baseline, pooled with the last holds'.
func (c *Controller) finishHold(now time.Time) {
	c.holding = false
	held := make([][]float64, 0, 3)
	for _, s := range c.signals() {
		held = append(held, s.cur)
		s.cur = nil
	}
	c.learn(now, held)
}

// learnIdle takes the probes of the stretch that ends at end, when the sweep deleted
// nothing, as a hold's, if the stretch was as long as a hold.
func (c *Controller) learnIdle(end time.Time) {
	if c.idleFrom.IsZero() || end.Sub(c.idleFrom) < c.cfg.BaselineHold {
		return
	}
	idle, enough := make([][]float64, 0, 3), false
	for _, s := range c.signals() {
		xs := s.idleUntil(end)
		idle, enough = append(idle, xs), enough || len(xs) >= 3
	}
	if enough {
		c.learn(end, idle)
		for _, s := range c.signals() {
			s.idle = nil
		}
		c.idleFrom = end
	}
}

// learn makes the samples of each signal (in the order of signals), taken while the
// sweep deleted nothing, that signal's newest hold (see baselineSignal.learn).
// Evaluation starts afresh from now.
func (c *Controller) learn(now time.Time, samples [][]float64) {
	first := c.baselineAt.IsZero()
	c.baselineAt, c.lastEval, c.lastCut, c.streak = now, now, now, 0
	learned := false
	for i, s := range c.signals() {
		learned = s.learn(samples[i], c.cfg.BaselineHolds) || learned
	}
	if first && learned {
		detail := "baseline"
		for _, s := range c.signals() {
			if s.learned() {
				detail += fmt.Sprintf("; %s p75 %s, p99 %s", s.name, s.format(s.baseline), s.format(s.tail))
			}
		}
		c.change(ReasonBaseline, detail)
	}
}

// evaluate judges the signals since the last cut and moves the rate.
func (c *Controller) evaluate(now time.Time) {
	c.lastEval = now
	since := now.Add(-c.cfg.SignalWindow)
	if c.lastCut.After(since) {
		since = c.lastCut
	}
	d := c.degraded(now, since)
	delivered := 0.0
	if c.winTime > 0 {
		delivered = float64(c.winRows) / c.winTime.Seconds()
	}
	c.winRows, c.winTime = 0, 0
	if d.reason != "" {
		c.cut(now, delivered, d)
		return
	}
	if !c.evidence(since) {
		return // no fresh evidence either way: hold the rate
	}
	c.streak = 0
	c.grow(now, delivered)
	if c.mode == ModeBackingOff {
		c.backingTotal += now.Sub(c.backingSince)
		c.mode = ModeGrowing
		c.change(ReasonRecovered, fmt.Sprintf("signals healthy after %v backing off; rate %.0f rows/s", now.Sub(c.backingSince), c.rate))
	}
}

// cut multiplies the rate by Backoff, or by less where the signal is further over its
// limit than Backoff would make up for (see cutFactor). It cuts from what was delivered
// when that is less than the rate aimed at, so the first cut bites at once (TCP reduces
// from what is in flight the same way). The first cut of a spell sets where the slow
// start that follows it hands over to additive growth.
func (c *Controller) cut(now time.Time, delivered float64, d degradation) {
	base := c.rate
	if delivered > 0 && delivered < base {
		base = delivered
	}
	if c.mode != ModeBackingOff {
		c.ssthresh = max(c.cfg.MinRate, c.cfg.RecoverShare*base)
	}
	c.rate = max(c.cfg.MinRate, base*cutFactor(c.cfg.Backoff, d.over))
	c.slowStart, c.lastCut = false, now
	c.cuts++
	if c.streak == 0 {
		c.streakSince = now
	}
	c.streak++
	if c.mode != ModeBackingOff {
		c.mode, c.backingSince = ModeBackingOff, now
		c.change(d.reason, d.detail)
	}
}

// cutFactor is what a cut multiplies the rate by: backoff, or, where the signal is
// more than 1/backoff times its limit, the inverse of that (at least minCutFactor). A
// sweep a little too fast is over its limit by a little, and halving is plenty; a surge
// of the load puts a signal several times over at once, and one cut by as much gets the
// sweep out of its way within the two seconds a second halving would cost.
func cutFactor(backoff, over float64) float64 {
	if over*backoff > 1 {
		return max(1/over, minCutFactor)
	}
	return backoff
}

// minCutFactor bounds one cut, so a single wild sample cannot throw the rate to its
// floor in one step.
const minCutFactor = 0.1

// degradation is a signal over its limit: which, the numbers for a log line, and how
// far over (its value over its limit; 0 where it is no ratio, as blocked sessions).
type degradation struct {
	reason Reason
	detail string
	over   float64
}

// grow raises the rate after a healthy evaluation. Until the first cut it doubles (slow
// start). After a cut it holds the rate until the signals have been quiet for
// QuietPeriod since the last cut, then doubles again (at least by RateStep, so the
// floor is left quickly) up to ssthresh, and grows by RateStep past it, as TCP grows
// its window after a loss: so a sweep cut to its floor by a surge is back near its
// earlier rate within seconds of the surge's end, not after a linear climb.
func (c *Controller) grow(now time.Time, delivered float64) {
	switch {
	case c.slowStart:
		c.rate = max(2*c.rate, c.rate+c.cfg.RateStep)
		if c.ssthresh > 0 && c.rate >= c.ssthresh {
			c.rate, c.slowStart = c.ssthresh, false
		}
	case c.rate < c.ssthresh && now.Sub(c.lastCut) < c.cfg.QuietPeriod:
		// Not quiet for long enough: the surge may still be on.
	case c.rate < c.ssthresh:
		c.slowStart = true
		c.rate = min(max(2*c.rate, c.rate+c.cfg.RateStep), c.ssthresh)
		if c.rate >= c.ssthresh {
			c.slowStart = false
		}
	default:
		c.rate += c.cfg.RateStep
	}
	// The rate stays within twice what the sweep delivered (BBR's startup gain is about
	// as much): a rate far above what its batches and the CPU share allow would take many
	// cuts to come down when a signal degrades. Capping by what was delivered rather than
	// by the batches' own speed keeps a sweep whose small batches are mostly fixed cost
	// (a busy server) able to grow out of them.
	if delivered > 0 {
		c.rate = max(c.cfg.MinRate, min(c.rate, 2*delivered))
	}
}

// evidence reports whether the evaluation has something to go on: no signal has a
// baseline (the sweep is paced by its batches alone), or one that has has at least
// three samples since since.
func (c *Controller) evidence(since time.Time) bool {
	any := false
	for _, s := range c.signals() {
		if s.learned() {
			any = true
			if len(s.since(since)) >= 3 {
				return true
			}
		}
	}
	return !any
}

// degraded returns the first signal that is over its bound, with the numbers (the
// sessions the sweep blocks, the replica lag and the busy sessions' ceiling first, then
// the signals judged against their baseline); the zero degradation when none is.
func (c *Controller) degraded(now, since time.Time) degradation {
	fresh := func(at time.Time) bool { return at.After(since) && !at.Before(now.Add(-c.cfg.SignalWindow)) }
	if fresh(c.blockedAt) && c.blocked > 0 {
		return degradation{ReasonBlocking, fmt.Sprintf("the sweep blocked %d session(s)", c.blocked), 0}
	}
	if fresh(c.lagAt) && c.lag > c.cfg.MaxReplicaLag {
		return degradation{ReasonReplicaLag, fmt.Sprintf("replica lag %v over %v", c.lag, c.cfg.MaxReplicaLag), float64(c.lag) / float64(c.cfg.MaxReplicaLag)}
	}
	// The limits the operator set come before the signals judged against a baseline,
	// so a back-off names the limit when both are over.
	if d := c.busy.overCeiling(since); d.reason != "" {
		return d
	}
	for _, s := range c.signals() {
		if d := s.judge(since, c.cfg); d.reason != "" {
			return d
		}
	}
	return degradation{}
}

// maxTailOverBaseline bounds the idle tail the limit is scaled by, so one stalled probe
// in a short hold (where the p99 is the slowest probe) cannot switch the probe signal
// off until the next re-learning.
const maxTailOverBaseline = 10

func (c *Controller) sawProbe() bool { return c.read.seen || c.commit.seen || c.busy.seen }

func (c *Controller) change(r Reason, detail string) {
	c.last = r
	c.pending = &Change{Reason: r, Detail: detail}
}

// nextBatch sizes the batch to the target time, no larger than batchWorth of the
// rate, changing by at most half or one and a half times per batch.
func (c *Controller) nextBatch() int {
	want := c.sizeForTarget()
	if c.oneSize() {
		// Batches all of one size cannot tell the fixed cost from the cost per row, and
		// scaling them to the target shrinks them for good where the fixed cost alone
		// exceeds it (a sweep cut to its smallest batches on a busy server): try a larger
		// one, so the next fit has two sizes to go by.
		want = max(want, c.batch+c.batch/2+1)
	}
	want = min(want, int(c.rate*c.batchWorth().Seconds()))
	want = clamp(want, c.batch/2, c.batch+c.batch/2+1)
	return clamp(want, c.cfg.MinBatch, c.cfg.MaxBatch)
}

// batchWorth is how much of the rate one batch may hold: MaxBatchWorth, or, where the
// CPU share spaces batches further apart than that (a batch mostly fixed cost on a busy
// server), that spacing. Smaller batches could never deliver the rate, and a rate held
// to twice what is delivered could then never grow.
func (c *Controller) batchWorth() time.Duration {
	if c.lastTook <= 0 {
		return c.cfg.MaxBatchWorth
	}
	return max(c.cfg.MaxBatchWorth, time.Duration(float64(c.lastTook)/c.cfg.CPUShare))
}

// oneSize reports whether the last batches, at least two, were all of one size.
func (c *Controller) oneSize() bool {
	if len(c.samples) < 2 {
		return false
	}
	for _, s := range c.samples[1:] {
		if s.rows != c.samples[0].rows {
			return false
		}
	}
	return true
}

// sizeForTarget is the batch that takes TargetBatchTime, from a straight line fitted
// through the last batches (time = fixed cost + cost per row x rows). Where the fixed
// cost alone exceeds the target (a busy server, a slow round trip), shrinking the batch
// cannot make it short, only make the sweep slow: the batch may then take one and a
// half times its fixed cost. Without a usable fit (batches all of one size, noise) it
// scales the last batches' sizes to the target.
func (c *Controller) sizeForTarget() int {
	n := len(c.samples)
	if n == 0 {
		return DefaultStartBatch
	}
	var mr, mt float64
	for _, s := range c.samples {
		mr += float64(s.rows)
		mt += float64(s.took)
	}
	mr, mt = mr/float64(n), mt/float64(n)
	var sxx, sxy float64
	for _, s := range c.samples {
		sxx += (float64(s.rows) - mr) * (float64(s.rows) - mr)
		sxy += (float64(s.rows) - mr) * (float64(s.took) - mt)
	}
	target := float64(c.cfg.TargetBatchTime)
	if sxx > 0 && sxy > 0 && c.slopeStandsOut(mr, mt, sxx, sxy) {
		perRow := sxy / sxx
		fixed := max(mt-perRow*mr, 0)
		return int(max(target-fixed, fixed/2) / perRow)
	}
	if mt > target {
		// Batches longer than the target whose times tell no cost per row from their
		// noise (a commit's flush that varies by milliseconds, over sizes a few rows
		// apart): as far as they show, the time is fixed cost, and scaling them to the
		// target would shrink them to MinBatch for good. Try a larger one, as for
		// batches all of one size, until the rows' cost shows.
		return c.batch + c.batch/2 + 1
	}
	ests := make([]int, 0, n)
	for _, s := range c.samples {
		ests = append(ests, max(int(float64(s.rows)*target/float64(s.took)), 1))
	}
	return median(ests)
}

// slopeStandsOut reports whether the fitted cost per row (sxy/sxx, through the means
// mr and mt) is at least twice its standard error: a slope the batches' noise could not
// have made by itself. Three samples at least.
func (c *Controller) slopeStandsOut(mr, mt, sxx, sxy float64) bool {
	n := len(c.samples)
	if n < 3 {
		return false
	}
	slope := sxy / sxx
	var ssr float64
	for _, s := range c.samples {
		r := float64(s.took) - (mt + slope*(float64(s.rows)-mr))
		ssr += r * r
	}
	se := math.Sqrt(ssr / float64(n-2) / sxx)
	return slope >= 2*se
}

// nextDelay spaces batches to the rate, and never closer than the CPU share allows.
// Both are spacings of batch starts; the pause is what is left of the spacing once the
// batch and the usual overhead between two batches are taken out.
func (c *Controller) nextDelay() time.Duration {
	took := c.lastTook
	if took == 0 {
		took = c.cfg.TargetBatchTime
	}
	byRate := time.Duration(float64(c.batch)/c.rate*float64(time.Second)) - took
	byShare := time.Duration(float64(took) * (1 - c.cfg.CPUShare) / c.cfg.CPUShare)
	return clampD(max(byRate, byShare)-c.overhead, c.cfg.MinDelay, c.cfg.MaxDelay)
}

// learnOverhead folds how late the batch that started at start was, against when the
// last decision made it due, into the running overhead, and returns that lateness: it is
// part of the time the sweep took to deliver the batch. A lateness longer than a batch's
// target time is a wait (for a slot, for a gate), not overhead: it is left out of both,
// as holds are, and 0 is returned.
func (c *Controller) learnOverhead(start time.Time) time.Duration {
	if c.dueAt.IsZero() {
		return 0
	}
	late := start.Sub(c.dueAt)
	c.dueAt = time.Time{}
	if late < 0 || late > c.cfg.TargetBatchTime {
		return 0
	}
	c.overhead += (late - c.overhead) / overheadSmoothing
	return late
}

// overheadSmoothing is how many batches the overhead's running average reaches back,
// roughly: enough that one slow hop does not move the pause, few enough that it follows
// a machine that got busier within a second.
const overheadSmoothing = 8

func clamp(v, lo, hi int) int { return max(lo, min(v, hi)) }

func clampD(v, lo, hi time.Duration) time.Duration { return max(lo, min(v, hi)) }

// probeQuantile is the quantile of the probe's samples that is judged, and learned as
// the baseline. Not the p90: on a shared machine one burst of a few hundred
// milliseconds elsewhere lifts the p90 of two seconds of probes, and the sweep would
// back off for it; harm the sweep causes slows a quarter of the probes or more.
const probeQuantile = 0.75

// quantile is the q quantile (nearest rank) of xs, which it does not modify.
func quantile(xs []float64, q float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	i := int(math.Ceil(q*float64(len(s)))) - 1
	return s[clamp(i, 0, len(s)-1)]
}

func median(xs []int) int {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}
