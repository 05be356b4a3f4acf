package actors

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/retentionkit/retention/core"
	"github.com/retentionkit/retention/core/clock"
	"github.com/retentionkit/retention/passes"
)

// SweepError is what a pass actor panics with when a sweep fails, so supervision (which
// only sees panics) gets the error, and its decider can read it with errors.As.
type SweepError struct {
	Pass  string
	Sweep int64
	Err   error
}

// Error names the pass and the sweep once: a pass's own error usually starts with
// `pass "name": ` already (a table pass's do), and that prefix is not repeated.
func (e *SweepError) Error() string {
	prefix := fmt.Sprintf("pass %q", e.Pass)
	msg := fmt.Sprint(e.Err)
	if rest, ok := strings.CutPrefix(msg, prefix+": "); ok {
		msg = rest
	}
	return fmt.Sprintf("%s sweep %d: %s", prefix, e.Sweep, msg)
}

// Unwrap returns the batch's error.
func (e *SweepError) Unwrap() error { return e.Err }

// errBatchTimedOut is the cause a batch's context is cancelled with at BatchTimeout.
var errBatchTimedOut = errors.New("batch timed out")

// errSuperseded is the cause a batch's context is cancelled with when its actor restarts
// or stops under it.
var errSuperseded = errors.New("pass actor restarted or stopped")

// deps are what every pass actor of a runtime shares.
type deps struct {
	system    *actor.ActorSystem
	clock     clock.Clock
	hub       *actor.PID
	gate      *actor.PID
	pools     map[string]*actor.PID
	batchBase context.Context // cancelled when a stop's grace period runs out
}

func (d *deps) publish(e Event) { d.system.Root.Send(d.hub, e) }

type tickKind int

const (
	tickSweep tickKind = iota
	tickBatch
)

// tick is a timer firing. inc and gen let a late tick of an old incarnation or of a
// replaced timer be recognised and dropped.
type tick struct {
	inc, gen uint64
	kind     tickKind
}

// batchResult is one PurgeBatch's outcome, sent back to the actor from the goroutine
// that ran it.
type batchResult struct {
	inc, req uint64
	pass     passes.Pass
	rows     int
	skipped  int
	more     bool // the pass said more is waiting despite a short batch
	err      error
	timedOut bool
	elapsed  time.Duration
}

// triggerSweep asks for a sweep now, on behalf of the ledger runs in runs (if any).
type triggerSweep struct{ runs []int64 }

// drainPass asks the pass to finish what is in flight, start nothing new, and close done.
type drainPass struct{ done chan<- struct{} }

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

// passActor runs one pass: stagger -> sweep -> batch -> delay. PurgeBatch runs on a
// goroutine of its own, so the actor answers trigger and drain requests during a batch.
type passActor struct {
	cell *passCell
	d    *deps

	inc      uint64
	timer    clock.Timer
	timerGen uint64
	sweep    *sweepRun
	req      uint64 // the admission request of the next or running batch; 0 when none
	inflight context.CancelCauseFunc
	worker   chan func() // runs batches, one at a time, off the mailbox
	followUp bool        // a trigger arrived during a sweep: sweep again when it ends
	runs     []int64     // ledger runs the next triggered sweep serves
	yield    bool        // someone waits for the places a.req holds: give them back
	draining bool
	drained  []chan<- struct{}
}

func newPassProps(c *passCell, d *deps) *actor.Props {
	return actor.PropsFromProducer(func() actor.Actor { return &passActor{cell: c, d: d} })
}

func (a *passActor) opts() passes.Options { return a.cell.reg.Options }
func (a *passActor) name() string         { return a.cell.reg.Name }

func (a *passActor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		a.started(ctx)
	case *actor.Restarting:
		a.cleanup(ctx)
	case *actor.Stopping:
		a.cleanup(ctx)
		a.stopped()
	case *tick:
		a.onTick(ctx, m)
	case *SlotGranted:
		a.onGranted(ctx, m)
	case *YieldSlot:
		if m.Req == a.req {
			a.yield = true
		}
	case *batchResult:
		a.onBatchResult(ctx, m)
	case *triggerSweep:
		a.onTrigger(ctx, m)
	case *drainPass:
		a.onDrain(ctx, m)
	}
}

func (a *passActor) started(ctx actor.Context) {
	a.inc = a.cell.incarnations.Add(1)
	backoff, restarted := a.cell.takeBackoff()
	if !a.opts().Enabled() {
		a.d.publish(PassStarted{Name: a.name(), Restart: restarted})
		a.cell.update(func(s *PassStatus) { s.State = StateDisabled })
		return
	}
	if restarted {
		a.d.publish(PassStarted{Name: a.name(), Offset: backoff, Restart: true})
		a.cell.update(func(s *PassStatus) { s.State = StateBackoff })
		a.schedule(ctx, backoff, tickSweep)
		return
	}
	a.d.publish(PassStarted{Name: a.name(), Offset: a.cell.offset})
	a.cell.update(func(s *PassStatus) { s.State = StateWaiting })
	a.schedule(ctx, a.cell.offset, tickSweep)
}

// schedule replaces the pending timer with one that sends kind after d. A zero delay is
// sent at once, without the clock.
func (a *passActor) schedule(ctx actor.Context, d time.Duration, kind tickKind) {
	a.stopTimer()
	a.timerGen++
	msg := &tick{inc: a.inc, gen: a.timerGen, kind: kind}
	if kind == tickSweep {
		next := a.d.clock.Now().Add(max(d, 0))
		a.cell.update(func(s *PassStatus) { s.NextSweep = next })
	}
	if d <= 0 {
		ctx.Send(ctx.Self(), msg)
		return
	}
	self, root := ctx.Self(), a.d.system.Root
	a.timer = a.d.clock.AfterFunc(d, func() { root.Send(self, msg) })
}

func (a *passActor) stopTimer() {
	if a.timer != nil {
		a.timer.Stop()
		a.timer = nil
	}
}

func (a *passActor) onTick(ctx actor.Context, m *tick) {
	if m.inc != a.inc || m.gen != a.timerGen {
		return
	}
	a.timer = nil
	switch m.kind {
	case tickSweep:
		a.startSweep(ctx, false)
	case tickBatch:
		a.requestAdmission(ctx)
	}
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

func (a *passActor) requestAdmission(ctx actor.Context) {
	a.req, a.yield = a.cell.requests.Add(1), false
	ctx.Send(a.d.gate, &acquire{Key: a.cell.reg.TargetKey(), Req: a.req, From: ctx.Self(), Then: a.pool()})
}

func (a *passActor) pool() *actor.PID { return a.d.pools[a.cell.reg.DatabaseName()] }

func (a *passActor) onGranted(ctx actor.Context, m *SlotGranted) {
	if m.Req != a.req || a.sweep == nil || a.inflight != nil {
		a.releaseRequest(ctx, m.Req) // a grant for a request this incarnation gave up
		return
	}
	a.runBatch(ctx) // the gate forwarded the request to the pool itself
}

// releaseRequest gives back whatever req holds or waits for, at both actors.
func (a *passActor) releaseRequest(ctx actor.Context, req uint64) {
	if req == 0 {
		return
	}
	ctx.Send(a.pool(), &ReleaseSlot{Req: req, From: ctx.Self()})
	ctx.Send(a.d.gate, &release{Req: req, From: ctx.Self()})
}

func (a *passActor) releaseAdmission(ctx actor.Context) {
	a.releaseRequest(ctx, a.req)
	a.req, a.yield = 0, false
}

// runBatch runs one PurgeBatch off the mailbox and sends the result back.
func (a *passActor) runBatch(ctx actor.Context) {
	sw, reg := a.sweep, a.cell.reg
	bctx, cancel := context.WithCancelCause(a.d.batchBase)
	var timeout clock.Timer
	if t := reg.Options.BatchTimeout; t > 0 {
		timeout = a.d.clock.AfterFunc(t, func() { cancel(errBatchTimedOut) })
	}
	a.inflight = cancel
	name, sweepID, d := a.name(), sw.id, a.d
	report := &batchReport{publish: func(key any, err error) {
		d.publish(RowSkipped{Name: name, Sweep: sweepID, Key: key, Err: err})
	}}
	bctx = passes.WithBatchReporter(bctx, report)
	res := &batchResult{inc: a.inc, req: a.req}
	self, pass, cutoff, size, start := ctx.Self(), sw.pass, sw.cutoff, reg.Options.BatchSize, d.clock.Now()
	a.startWorker()
	a.worker <- func() {
		res.pass, res.rows, res.err = purge(bctx, pass, reg.New, size, cutoff)
		res.timedOut = res.err != nil && errors.Is(context.Cause(bctx), errBatchTimedOut)
		res.skipped, res.more = int(report.skipped.Load()), report.more.Load()
		res.elapsed = d.clock.Now().Sub(start)
		if timeout != nil {
			timeout.Stop()
		}
		cancel(nil)
		d.system.Root.Send(self, res)
	}
}

// startWorker starts the goroutine that runs this incarnation's batches. Reusing one
// goroutine keeps the stack a batch grew (a database driver's call chain is deep) instead
// of growing a fresh one for every batch; the channel never blocks, since one batch at a
// time is in flight.
func (a *passActor) startWorker() {
	if a.worker != nil {
		return
	}
	a.worker = make(chan func(), 1)
	go func(jobs <-chan func()) {
		for job := range jobs {
			job()
		}
	}(a.worker)
}

// batchReport is the passes.BatchReporter of one batch.
type batchReport struct {
	publish func(key any, err error)
	skipped atomic.Int64
	more    atomic.Bool
}

func (r *batchReport) RowSkipped(key any, err error) {
	r.skipped.Add(1)
	r.publish(key, err)
}

func (r *batchReport) MoreWaiting() { r.more.Store(true) }

// purge builds the pass if this is the sweep's first batch, then runs one batch. A panic
// in either becomes a *core.PanicError.
func purge(ctx context.Context, pass passes.Pass, factory passes.Factory, size int, cutoff time.Time) (p passes.Pass, n int, err error) {
	p = pass
	defer func() {
		if v := recover(); v != nil {
			err = &core.PanicError{Value: v}
		}
	}()
	if p == nil {
		if p, err = factory(ctx); err != nil {
			return nil, 0, fmt.Errorf("build pass: %w", err)
		}
	}
	n, err = p.PurgeBatch(ctx, size, cutoff)
	return p, n, err
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

func (a *passActor) endSweep(ctx actor.Context, reason StopReason) {
	sw := a.sweep
	a.sweep = nil
	closePass(sw.pass)
	now := a.d.clock.Now()
	good := reason.Succeeded()
	a.d.publish(SweepDone{Name: a.name(), Sweep: sw.id, Cutoff: sw.cutoff, Rows: sw.rows, Skipped: sw.skipped,
		Batches: sw.batches, WorkRemains: reason.LeavesWork(), Reason: reason, Duration: now.Sub(sw.started), At: now})
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
	default:
		a.schedule(ctx, a.opts().EffectiveInterval(), tickSweep)
	}
}

func closePass(p passes.Pass) {
	if c, ok := p.(passes.Closer); ok {
		_ = c.Close()
	}
}

func (a *passActor) onDrain(ctx actor.Context, m *drainPass) {
	a.draining = true
	a.drained = append(a.drained, m.done)
	a.stopTimer()
	switch {
	case a.sweep == nil:
		a.finishDrain()
	case a.inflight != nil:
		// the batch's result ends the sweep
	default:
		a.releaseAdmission(ctx)
		a.endSweep(ctx, Stopped)
	}
}

func (a *passActor) finishDrain() {
	for _, done := range a.drained {
		close(done)
	}
	a.drained = nil
	a.cell.update(func(s *PassStatus) { s.NextSweep = time.Time{} })
}

// cleanup runs when the incarnation ends (restart or stop): nothing it started may
// outlive it.
func (a *passActor) cleanup(ctx actor.Context) {
	a.stopTimer()
	if a.inflight != nil {
		a.inflight(errSuperseded)
		a.inflight = nil
	}
	a.releaseAdmission(ctx)
	if a.sweep != nil {
		closePass(a.sweep.pass)
		a.sweep = nil
	}
	if a.worker != nil {
		close(a.worker) // a batch still running finishes; its result is dropped
		a.worker = nil
	}
	a.finishDrain()
}

func (a *passActor) stopped() {
	err, degraded := a.cell.gaveUpWith()
	reason := "runtime stopped"
	if degraded {
		reason = "restart limit exceeded"
	}
	a.cell.update(func(s *PassStatus) { s.State = StateStopped; s.NextSweep = time.Time{} })
	a.d.publish(PassStopped{Name: a.name(), Reason: reason, Degraded: degraded, Err: err})
	a.cell.markGone()
}
