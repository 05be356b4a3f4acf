package actors

import (
	"time"

	"github.com/asynkron/protoactor-go/actor"
)

// Draining is a pass's part of a graceful stop: finish the batch in flight, start nothing
// new, and tell the runtime when it is done.

// drainPass asks the pass to finish what is in flight, start nothing new, and close done.
// closed, when set, is closed once the pass's worker has also run every close queued
// before the drain finished: a table pass gives its sweep lock back in its Close, on the
// worker, so closed says the pass holds no lock any more (see whenIdle).
type drainPass struct {
	done   chan<- struct{}
	closed chan<- struct{}
}

func (a *passActor) onDrain(ctx actor.Context, m *drainPass) {
	a.draining = true
	a.drained = append(a.drained, m)
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
	for _, m := range a.drained {
		close(m.done)
		if m.closed != nil {
			a.whenIdle(m.closed)
		}
	}
	a.drained = nil
	a.cell.update(func(s *PassStatus) { s.NextSweep = time.Time{} })
}

// whenIdle closes ch once the worker has run everything queued so far: the close of the
// sweep that just ended (its hygiene and its lock's release) runs on the worker after the
// actor has moved on, so without this wait a runtime could report a pass stopped while
// its connection still held the sweep lock, and a process exiting then would leave the
// lock to PostgreSQL's detection of the dead connection (up to a second while a
// statement runs) while another member's first try is denied. The worker runs its jobs in
// order, so a job queued now runs after every close before it.
func (a *passActor) whenIdle(ch chan<- struct{}) {
	if a.worker == nil {
		close(ch)
		return
	}
	a.worker <- func() { close(ch) }
}
