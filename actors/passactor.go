package actors

import (
	"context"
	"errors"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/retentionkit/retention/core/clock"
	"github.com/retentionkit/retention/passes"
)

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
	// elsewhereRetry is the first wait after a sweep that ran elsewhere.
	elsewhereRetry time.Duration
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
	drained  []*drainPass
	denials  int // sweeps in a row that ended Elsewhere

	// Paused (see Override.Paused): held is a sweep stopped between two batches,
	// heldSweep a sweep that came due, heldTrigger whether a trigger asked for it.
	held, heldSweep, heldTrigger bool
	pace                         *pacer // an adaptive pass's controller; nil until its first adaptive sweep
}

func newPassProps(c *passCell, d *deps) *actor.Props {
	return actor.PropsFromProducer(func() actor.Actor { return &passActor{cell: c, d: d} })
}

func (a *passActor) opts() passes.Options { return a.cell.options() }
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
	case *setOverride:
		a.onOverride(ctx, m)
	case *paceTick:
		a.onPaceTick(ctx, m)
	case *paceSignals:
		a.onPaceSignals(m)
	case *ping:
		ctx.Respond(&pong{})
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
	if runs, ok := a.cell.place.takeFirst(); ok { // activated for a requested sweep
		a.d.publish(PassStarted{Name: a.name()})
		a.runs = runs
		a.startSweep(ctx, true)
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
		if a.cell.paused() {
			a.held = true
			a.cell.update(func(s *PassStatus) { s.State = StatePaused })
			return
		}
		if a.sweep != nil && a.sweep.adaptive {
			a.admitPaced(ctx)
			return
		}
		a.requestAdmission(ctx)
	}
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
		a.closePass(a.sweep)
		a.sweep = nil
	}
	a.finishDrain() // before the worker goes: a drain's closed waits for the close queued above
	if a.worker != nil {
		close(a.worker) // a batch still running finishes; its result is dropped
		a.worker = nil
	}
	a.closePacing()
}

func (a *passActor) stopped() {
	err, degraded := a.cell.gaveUpWith()
	reason := "runtime stopped"
	if degraded {
		reason = "restart limit exceeded"
	} else if a.cell.place.leaving.Load() {
		reason = reasonDeactivated
	}
	// Requested runs no sweep served (a trigger that came during the last sweep, or as the
	// pass was draining) are handed back whatever the reason, so the ledger closes them:
	// a node's last runtime stop leaves no one to recover them as abandoned.
	unserved := a.runs
	a.runs = nil
	a.cell.update(func(s *PassStatus) { s.State = StateStopped; s.NextSweep = time.Time{} })
	a.d.publish(PassStopped{Name: a.name(), Reason: reason, Degraded: degraded, Err: err, Unserved: unserved})
	a.cell.markGone()
}
