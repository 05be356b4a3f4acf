package actors

import (
	"context"
	"errors"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/retentionkit/retention/core/clock"
	"github.com/retentionkit/retention/core/pacing"
	"github.com/retentionkit/retention/passes"
)

// Adaptive pacing in the pass actor: a pacing.Controller picks each batch's size and
// the pause before it, fed by a signal loop that runs the pass's probe and its commit
// probe every ProbeEvery, and its blocked-sessions and replica-lag queries every SignalEvery, on a
// goroutine of its own, while a sweep runs. Timers come from the runtime's clock;
// latencies are measured on the wall clock, since they are what the database took.

const (
	// ProbeEvery is how often an adaptive pass runs its probe query during a sweep.
	ProbeEvery = 100 * time.Millisecond
	// SignalEvery is how often it counts the sessions its sweep blocks and reads the
	// replicas' lag.
	SignalEvery = 500 * time.Millisecond
	// probeTimeout bounds one signal query.
	probeTimeout = 10 * time.Second
)

// paceTick is the signal loop's timer firing.
type paceTick struct{ inc, gen uint64 }

// paceSignals is what one round of the signal loop measured.
type paceSignals struct {
	inc             uint64
	probe           time.Duration
	probed          bool
	commit          time.Duration
	committed       bool
	noCommit        bool // the database has no commit probe, or refused it
	busySessions    int
	busyOK          bool
	noBusy          bool // the database shows no other sessions
	blocked         int
	blockedOK       bool
	lag             time.Duration
	lagOK, replicas bool
	// lagUnknown is why a listed replica's lag cannot be told ("" when it can, or no
	// replica was read this round).
	lagUnknown string
	lagRead    bool // the round read the replicas
}

// pacer is an adaptive pass's controller and signal loop. It outlives sweeps, so the
// baseline learned in one serves the next until it is due to be re-learned.
type pacer struct {
	ctl     *pacing.Controller
	signals passes.PaceSignals
	timer   clock.Timer
	gen     uint64
	ticks   int
	inRound bool // a round of signals is running
	// noCommit: the pass leaves the commit probe out (Options.CommitProbe, off by
	// default), or the probe reported no signal or failed (a standby, a read-only
	// role); it is not tried again by this actor.
	noCommit bool
	// noBusy: the database shows no other sessions (SQLite); not asked again.
	noBusy bool
	jobs   chan func()
	// lagUnknown is why a listed replica's lag cannot be told, as the last reading
	// said; while it is set the sweep's batches wait (admitPaced).
	lagUnknown string
	waiting    bool // a wait for the replica is under way, announced once

	sweep paceSweep // this sweep's figures, for its summary line
}

// paceSweep is one sweep's pacing, for SweepDone.
type paceSweep struct {
	minBatch, maxBatch int
	changes            int
	cuts0              int
	backing0           time.Duration
}

func newPacer(o passes.Options, signals passes.PaceSignals) *pacer {
	ctl := pacing.New(pacing.Config{MinBatch: min(pacing.DefaultMinBatch, o.BatchSize), MaxBatch: o.BatchSize,
		MinDelay: o.BatchDelay, MaxDelay: max(pacing.DefaultMaxDelay, o.BatchDelay), MaxReplicaLag: o.ReplicaLagLimit(),
		MaxBusySessions: o.MaxBusySessions})
	// Without CommitProbe the probe is never run, as if the database had none.
	return &pacer{ctl: ctl, signals: signals, noCommit: !o.CommitProbe}
}

// adaptive reports whether the pass is paced by its controller now: its options say
// so, or an operator switched it (Runtime.SetPacing).
func (a *passActor) adaptive() bool { return a.cell.pacingMode() == passes.PacingAdaptive }

// startPacing begins a sweep's pacing: the controller may hold the first batch back to
// learn its baseline, and the signal loop starts.
func (a *passActor) startPacing(ctx actor.Context) {
	o := a.opts()
	if a.pace == nil {
		a.pace = newPacer(o, a.cell.reg.Signals)
	}
	p, now := a.pace, a.d.clock.Now()
	// The bounds are read again at every sweep: batch_size and batch_delay may have been
	// changed since the last one.
	p.ctl.SetBounds(min(pacing.DefaultMinBatch, o.BatchSize), o.BatchSize, o.BatchDelay)
	st := p.ctl.State(now)
	p.sweep = paceSweep{cuts0: st.Cuts, backing0: st.BackingOff}
	p.lagUnknown, p.waiting = "", false // the last sweep's reading is no news of now
	if p.signals != nil {               // without signals there is no baseline to hold back for
		p.ctl.StartSweep(now)
		a.schedulePaceTick(ctx)
	}
}

// stopPacing ends the signal loop at the end of a sweep; a round in flight is dropped.
func (a *passActor) stopPacing() {
	if a.pace == nil {
		return
	}
	if a.pace.timer != nil {
		a.pace.timer.Stop()
		a.pace.timer = nil
	}
	a.pace.gen++
}

// closePacing ends the signal goroutine with the incarnation.
func (a *passActor) closePacing() {
	a.stopPacing()
	if a.pace != nil && a.pace.jobs != nil {
		close(a.pace.jobs)
		a.pace.jobs = nil
	}
}

func (a *passActor) schedulePaceTick(ctx actor.Context) {
	p := a.pace
	p.gen++
	msg, self, root := &paceTick{inc: a.inc, gen: p.gen}, ctx.Self(), a.d.system.Root
	p.timer = a.d.clock.AfterFunc(ProbeEvery, func() { root.Send(self, msg) })
}

func (a *passActor) onPaceTick(ctx actor.Context, m *paceTick) {
	p := a.pace
	if p == nil || m.inc != a.inc || m.gen != p.gen || a.sweep == nil {
		return
	}
	a.schedulePaceTick(ctx)
	if p.inRound {
		return // the last round has not answered yet: its late answer is itself the signal
	}
	p.inRound = true
	p.ticks++
	full := p.ticks%int(SignalEvery/ProbeEvery) == 0
	sig, sweep, base, inc, self, root := p.signals, a.sweep.pass, a.d.batchBase, a.inc, ctx.Self(), a.d.system.Root
	commit, countBusy := !p.noCommit, !p.noBusy
	if p.jobs == nil {
		p.jobs = make(chan func(), 1)
		go func(jobs <-chan func()) {
			for job := range jobs {
				job()
			}
		}(p.jobs)
	}
	p.jobs <- func() {
		res := &paceSignals{inc: inc}
		qctx, cancel := context.WithTimeout(base, probeTimeout)
		defer cancel()
		start := time.Now()
		if err := sig.Probe(qctx); err == nil || qctx.Err() != nil {
			res.probe, res.probed = time.Since(start), true // a probe that timed out was slow
		}
		if commit {
			res.commit, res.committed, res.noCommit = commitProbe(qctx, sig)
		}
		if countBusy {
			// Every tick, as the probe: a surge of the load shows here first.
			n, shown, err := sig.BusySessions(qctx, sweep)
			res.busySessions, res.busyOK, res.noBusy = n, err == nil && shown, err == nil && !shown
		}
		if full {
			if sweep != nil {
				res.blocked, res.blockedOK = countBlocked(qctx, sig, sweep)
			}
			lag, replicas, err := sig.ReplicaLag(qctx)
			res.lag, res.replicas, res.lagOK, res.lagRead = lag, replicas, err == nil, true
			if errors.Is(err, passes.ErrReplicaLagUnknown) {
				res.lagUnknown = err.Error()
			}
		}
		root.Send(self, res)
	}
}

// commitProbe runs and times the commit probe. A database without one, or one that
// refuses it, reports noCommit; a probe that timed out was slow.
func commitProbe(ctx context.Context, sig passes.PaceSignals) (lat time.Duration, ok, noCommit bool) {
	start := time.Now()
	has, err := sig.CommitProbe(ctx)
	switch {
	case err != nil && ctx.Err() != nil:
		return time.Since(start), true, false
	case err != nil || !has:
		return 0, false, true
	}
	return time.Since(start), true, false
}

func countBlocked(ctx context.Context, sig passes.PaceSignals, sweep passes.Pass) (int, bool) {
	n, err := sig.Blocked(ctx, sweep)
	return n, err == nil
}

func (a *passActor) onPaceSignals(m *paceSignals) {
	p := a.pace
	if p == nil || m.inc != a.inc {
		return
	}
	p.inRound = false
	now := a.d.clock.Now()
	if m.probed {
		p.ctl.Probe(now, m.probe)
	}
	if m.committed {
		p.ctl.Commit(now, m.commit)
	}
	p.noCommit = p.noCommit || m.noCommit
	if m.busyOK {
		p.ctl.Busy(now, m.busySessions)
	}
	p.noBusy = p.noBusy || m.noBusy
	if m.blockedOK {
		p.ctl.Blocked(now, m.blocked)
	}
	if m.lagOK && m.replicas {
		p.ctl.ReplicaLag(now, m.lag)
	}
	if m.lagRead {
		p.lagUnknown = m.lagUnknown
	}
}

// paceNext asks the controller for the next batch: its size goes to the sweep, and the
// pause before it is returned. A change of mode is published as PaceChanged.
func (a *passActor) paceNext() time.Duration {
	p, sw, now := a.pace, a.sweep, a.d.clock.Now()
	d := p.ctl.Next(now)
	sw.size = d.Batch
	if p.sweep.minBatch == 0 || d.Batch < p.sweep.minBatch {
		p.sweep.minBatch = d.Batch
	}
	p.sweep.maxBatch = max(p.sweep.maxBatch, d.Batch)
	st := p.ctl.State(now)
	a.cell.update(func(s *PassStatus) { s.Pace = paceStatus(passes.PacingAdaptive, st) })
	if d.Change != nil {
		p.sweep.changes++
		a.d.publish(PaceChanged{Name: a.name(), Sweep: sw.id, Reason: d.Change.Reason, Detail: d.Change.Detail,
			Batch: d.Batch, Delay: d.Delay, Rate: st.Rate, Baseline: st.Baseline, Probe: st.Probe, ReplicaLag: st.ReplicaLag, At: now})
	}
	return d.Delay
}

// paceBatchDone gives the controller a batch's rows and wall-clock time.
func (a *passActor) paceBatchDone(m *batchResult) {
	if a.pace != nil && m.err == nil {
		a.pace.ctl.Batch(a.d.clock.Now(), m.rows+m.skipped, m.took)
	}
}

// paceSummary is the sweep's pacing for SweepDone; nil for a fixed-pace sweep.
func (a *passActor) paceSummary(sw *sweepRun) *PaceSummary {
	if !sw.adaptive || a.pace == nil {
		return nil
	}
	p := a.pace
	st := p.ctl.State(a.d.clock.Now())
	return &PaceSummary{MinBatch: p.sweep.minBatch, MaxBatch: p.sweep.maxBatch, LastBatch: st.Batch, LastDelay: st.Delay,
		Rate: st.Rate, Baseline: st.Baseline, Probe: st.Probe, CommitBaseline: st.CommitBaseline, Commit: st.Commit, ReplicaLag: st.ReplicaLag,
		BusyBaseline: st.BusyBaseline, Busy: st.Busy, Cuts: st.Cuts - p.sweep.cuts0, BackingOff: st.BackingOff - p.sweep.backing0, Changes: p.sweep.changes}
}

// paceStatus is the pace as PassStatus shows it.
func paceStatus(mode passes.Pacing, st pacing.State) *PaceStatus {
	return &PaceStatus{Pacing: mode, Mode: st.Mode, Batch: st.Batch, Delay: st.Delay, Rate: st.Rate, Baseline: st.Baseline,
		Probe: st.Probe, CommitBaseline: st.CommitBaseline, Commit: st.Commit, BusyBaseline: st.BusyBaseline, Busy: st.Busy,
		ReplicaLag: st.ReplicaLag, Blocked: st.Blocked, BackingOff: st.BackingOff, Cuts: st.Cuts, LastReason: st.Last}
}
