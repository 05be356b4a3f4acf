package actors

import (
	"errors"
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/retentionkit/retention/core"
	"github.com/retentionkit/retention/passes"
)

// triggerSweep asks for a sweep now, on behalf of the ledger runs in runs (if any).
type triggerSweep struct{ runs []int64 }

// sweepRun is the sweep in progress.
type sweepRun struct {
	id      int64
	cutoff  time.Time
	started time.Time
	trigger bool
	pass    passes.Pass
	batches int
	rows    int
	skipped int
	held    int            // rows left in place without a report of their own (passes.ReportHeld)
	heldBy  map[string]int // skipped and held rows, by cause: the sweep's summary
	idle    int            // batches in a row that reported more waiting yet took nothing
	// adaptive is fixed when the sweep starts: a pacing switch waits for the next.
	adaptive bool
	size     int // the controller's size for the next batch (adaptive sweeps)
	// left: the expired partitions the retire phase left attached, and why.
	left partitionsLeft
}

func (a *passActor) onTrigger(ctx actor.Context, m *triggerSweep) {
	if a.opts().Enabled() {
		a.runs = append(a.runs, m.runs...)
		a.startSweep(ctx, true)
	}
}

// startSweep fixes the cutoff and asks for the first batch's admission. During a sweep
// (only a trigger gets here then) it asks for one follow-up sweep instead.
func (a *passActor) startSweep(ctx actor.Context, trigger bool) {
	if a.draining {
		return
	}
	if a.sweep != nil {
		a.followUp = true
		return
	}
	a.stopTimer()
	if a.cell.paused() {
		a.holdSweep(trigger)
		return
	}
	now := a.d.clock.Now()
	sw := &sweepRun{cutoff: a.opts().Cutoff(now), started: now, trigger: trigger}
	a.cell.update(func(s *PassStatus) {
		s.Sweeps++
		sw.id = s.Sweeps
		s.State = StateSweeping
		s.LastSweepStarted = now
		s.NextSweep = time.Time{}
	})
	a.sweep = sw
	runs := a.runs
	a.runs = nil
	a.d.publish(SweepStarted{Name: a.name(), Sweep: sw.id, Cutoff: sw.cutoff, Trigger: trigger, At: now, Runs: runs})
	if sw.adaptive = a.adaptive(); sw.adaptive {
		a.startPacing(ctx)
		a.batchAfter(ctx, a.paceNext())
		return
	}
	a.cell.update(func(s *PassStatus) { s.Pace = nil })
	a.requestAdmission(ctx)
}

// batchSize is the size of the sweep's next batch: the controller's choice under
// adaptive pacing, the options' BatchSize under fixed.
func (a *passActor) batchSize() int {
	if a.sweep.adaptive {
		return a.sweep.size
	}
	return a.opts().BatchSize
}

// batchAfter asks for the next batch's admission after d.
func (a *passActor) batchAfter(ctx actor.Context, d time.Duration) {
	if d > 0 {
		a.schedule(ctx, d, tickBatch)
		return
	}
	a.admitPaced(ctx)
}

// boundReached reports whether the sweep has done what one sweep may: MaxBatchesPerSweep
// batches, or under adaptive pacing (smaller batches) as many rows as that many full
// batches would be. An unbounded sweep never reaches it.
func (a *passActor) boundReached(sw *sweepRun) bool {
	opts := a.opts()
	switch {
	case !opts.Bounded():
		return false
	case sw.adaptive:
		return sw.rows+sw.skipped >= opts.MaxBatchesPerSweep*opts.BatchSize
	}
	return sw.batches >= opts.MaxBatchesPerSweep
}

func (a *passActor) onBatchResult(ctx actor.Context, m *batchResult) {
	if m.inc != a.inc || a.sweep == nil {
		return // a batch of an earlier incarnation; its admission was released then
	}
	a.inflight = nil
	sw, opts := a.sweep, a.opts()
	if m.pass != nil {
		sw.pass = m.pass
	}
	sw.skipped += m.skipped
	sw.held += m.held
	sw.left.merge(m.left)
	for cause, n := range m.heldBy {
		if sw.heldBy == nil {
			sw.heldBy = map[string]int{}
		}
		sw.heldBy[cause] += n
	}
	full := m.rows+m.skipped+m.held == m.size || m.more
	if m.more && m.rows == 0 && m.skipped == 0 && m.held == 0 && m.retired == 0 {
		sw.idle++
	} else {
		sw.idle = 0
	}
	hold := a.keepsAdmission(m, full)
	if !hold {
		a.releaseAdmission(ctx)
	}
	if errors.Is(m.err, passes.ErrRunningElsewhere) && a.d.batchBase.Err() == nil {
		a.endSweepDenied(ctx, m.err)
		return
	}
	switch {
	case m.err != nil && a.d.batchBase.Err() != nil:
		a.endSweep(ctx, Stopped)
		return
	case m.timedOut:
		a.d.publish(PassCancelled{Name: a.name(), Sweep: sw.id, Err: m.err})
		a.endSweep(ctx, Cancelled)
		return
	case m.err != nil:
		a.fail(ctx, m.err)
	case m.rows < 0 || m.rows+m.skipped+m.held > m.size:
		a.fail(ctx, core.NewBusinessRuleError(fmt.Sprintf(
			"pass %q: PurgeBatch returned %d rows (and skipped %d, held %d) for a batch of %d", a.name(), m.rows, m.skipped, m.held, m.size)))
	}
	sw.batches++
	sw.rows += m.rows
	a.cell.update(func(s *PassStatus) { s.TotalRows += int64(m.rows); s.TotalSkipped += int64(m.skipped) })
	a.d.publish(BatchDone{Name: a.name(), Sweep: sw.id, Batch: sw.batches, Rows: m.rows, Duration: m.elapsed})
	if sw.adaptive {
		a.paceBatchDone(m)
	}
	switch {
	case !full && len(sw.heldBy) > 0:
		a.endSweep(ctx, Held)
	case !full:
		a.endSweep(ctx, Drained)
	case sw.idle >= ContendedAfter:
		a.endSweep(ctx, Contended)
	case a.boundReached(sw):
		a.endSweep(ctx, BatchLimit)
	case a.draining:
		a.endSweep(ctx, Stopped)
	case a.cell.paused():
		a.held = true
		a.cell.update(func(s *PassStatus) { s.State = StatePaused })
	case sw.adaptive:
		a.batchAfter(ctx, a.paceNext())
	case opts.BatchDelay > 0:
		a.schedule(ctx, opts.BatchDelay, tickBatch)
	case hold:
		a.runBatch(ctx) // nobody waits for the gate or the slot: keep them
	default:
		a.requestAdmission(ctx)
	}
}

// keepsAdmission reports whether the next batch of the sweep follows at once and nobody
// waits for the gate or the slot, so the batch may keep both instead of asking again.
func (a *passActor) keepsAdmission(m *batchResult, full bool) bool {
	sw, opts := a.sweep, a.opts()
	sane := m.rows >= 0 && m.rows+m.skipped+m.held <= m.size
	goesOn := full && sw.idle < ContendedAfter && (!opts.Bounded() || sw.batches+1 < opts.MaxBatchesPerSweep)
	return m.err == nil && sane && goesOn && !sw.adaptive && !a.draining && opts.BatchDelay == 0 && !a.yield && !a.cell.paused()
}

// fail ends the sweep and hands the error to supervision by panicking with it.
func (a *passActor) fail(ctx actor.Context, err error) {
	sw := a.sweep
	a.d.publish(PassFailed{Name: a.name(), Sweep: sw.id, Err: err})
	a.cell.update(func(s *PassStatus) {
		s.Failures++
		s.ConsecutiveFailures++
		s.LastError = err.Error()
	})
	a.endSweep(ctx, Failed)
	panic(&SweepError{Pass: a.name(), Sweep: sw.id, Err: err})
}

// endSweepDenied ends a sweep whose lock another session holds: not a batch, not a
// failure; the pass tries again after a wait that doubles while denials continue.
func (a *passActor) endSweepDenied(ctx actor.Context, err error) {
	a.denials++
	a.endSweepWith(ctx, Elsewhere, err)
}

// elsewhereWait is the wait before the next try after the denials in a row so far.
func (a *passActor) elsewhereWait() time.Duration {
	wait, limit := a.d.elsewhereRetry, a.opts().EffectiveInterval()
	for i := 1; i < a.denials && wait < limit; i++ {
		wait *= 2
	}
	return min(wait, limit)
}

func (a *passActor) endSweep(ctx actor.Context, reason StopReason) {
	a.denials = 0
	a.endSweepWith(ctx, reason, nil)
}

func (a *passActor) endSweepWith(ctx actor.Context, reason StopReason, denied error) {
	sw := a.sweep
	a.sweep = nil
	a.closePass(sw)
	now := a.d.clock.Now()
	good := reason.Succeeded()
	pace := a.paceSummary(sw)
	if sw.adaptive {
		a.stopPacing()
	}
	a.d.publish(SweepDone{Name: a.name(), Sweep: sw.id, Cutoff: sw.cutoff, Rows: sw.rows, Skipped: sw.skipped,
		Batches: sw.batches, WorkRemains: reason.LeavesWork(), Reason: reason, Duration: now.Sub(sw.started), At: now, Denied: denied, Pace: pace,
		HeldBy: sw.heldBy})
	a.cell.update(func(s *PassStatus) {
		s.State = StateWaiting
		s.LastSweepEnded = now
		s.LastSweepRows = sw.rows
		s.LastSweepReason = reason
		s.LastWorkRemains = reason.LeavesWork()
		if good {
			s.ConsecutiveFailures = 0
			s.Drift, s.DriftError = false, ""
			// A sweep that ran to its end says what is left now: a later sweep that
			// retires them (or finds nothing expired) clears it.
			s.ExpiredPartitionsLeft, s.ExpiredPartitionsReason = sw.left.n, sw.left.reason
		}
	})
	if good && a.cell.strategy != nil {
		a.cell.strategy.GoodSweep(ctx.Self())
	}
	switch {
	case reason == Failed:
	case a.draining:
		a.finishDrain()
	case a.followUp:
		a.followUp = false
		a.startSweep(ctx, true)
	case reason == Elsewhere:
		a.schedule(ctx, a.elsewhereWait(), tickSweep)
	default:
		a.schedule(ctx, a.opts().EffectiveInterval(), tickSweep)
	}
}

// closePass closes the sweep's pass on the batch goroutine, after its last batch and
// before the next sweep's first: a table pass's Close may run its hygiene (ANALYZE,
// VACUUM) there, which must not hold up the actor's mailbox. A failure is an event.
func (a *passActor) closePass(sw *sweepRun) {
	c, ok := sw.pass.(passes.Closer)
	if !ok {
		return
	}
	name, id, d := a.name(), sw.id, a.d
	a.startWorker()
	a.worker <- func() {
		if err := c.Close(); err != nil {
			d.publish(SweepCloseFailed{Name: name, Sweep: id, Err: err})
		}
	}
}
