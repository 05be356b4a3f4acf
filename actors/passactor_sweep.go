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
	idle    int // batches in a row that reported more waiting yet took nothing
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
	now := a.d.clock.Now()
	sw := &sweepRun{cutoff: now.Add(-*a.opts().RetentionPeriod), started: now, trigger: trigger}
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
	a.requestAdmission(ctx)
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
	full := m.rows+m.skipped == opts.BatchSize || m.more
	if m.more && m.rows == 0 && m.skipped == 0 {
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
	case m.rows < 0 || m.rows+m.skipped > opts.BatchSize:
		a.fail(ctx, core.NewBusinessRuleError(fmt.Sprintf(
			"pass %q: PurgeBatch returned %d rows (and skipped %d) for a batch of %d", a.name(), m.rows, m.skipped, opts.BatchSize)))
	}
	sw.batches++
	sw.rows += m.rows
	a.cell.update(func(s *PassStatus) { s.TotalRows += int64(m.rows); s.TotalSkipped += int64(m.skipped) })
	a.d.publish(BatchDone{Name: a.name(), Sweep: sw.id, Batch: sw.batches, Rows: m.rows, Duration: m.elapsed})
	switch {
	case !full:
		a.endSweep(ctx, Drained)
	case sw.idle >= ContendedAfter:
		a.endSweep(ctx, Contended)
	case sw.batches >= opts.MaxBatchesPerSweep:
		a.endSweep(ctx, BatchLimit)
	case a.draining:
		a.endSweep(ctx, Stopped)
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
	sane := m.rows >= 0 && m.rows+m.skipped <= opts.BatchSize
	goesOn := full && sw.idle < ContendedAfter && sw.batches+1 < opts.MaxBatchesPerSweep
	return m.err == nil && sane && goesOn && !a.draining && opts.BatchDelay == 0 && !a.yield
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
	closePass(sw.pass)
	now := a.d.clock.Now()
	good := reason.Succeeded()
	a.d.publish(SweepDone{Name: a.name(), Sweep: sw.id, Cutoff: sw.cutoff, Rows: sw.rows, Skipped: sw.skipped,
		Batches: sw.batches, WorkRemains: reason.LeavesWork(), Reason: reason, Duration: now.Sub(sw.started), At: now, Denied: denied})
	a.cell.update(func(s *PassStatus) {
		s.State = StateWaiting
		s.LastSweepEnded = now
		s.LastSweepRows = sw.rows
		s.LastSweepReason = reason
		s.LastWorkRemains = reason.LeavesWork()
		if good {
			s.ConsecutiveFailures = 0
			s.Drift, s.DriftError = false, ""
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

func closePass(p passes.Pass) {
	if c, ok := p.(passes.Closer); ok {
		_ = c.Close()
	}
}
