package actors

import (
	"time"

	"github.com/asynkron/protoactor-go/actor"
)

// Draining is a pass's part of a graceful stop: finish the batch in flight, start nothing
// new, and tell the runtime when it is done.

// drainPass asks the pass to finish what is in flight, start nothing new, and close done.
type drainPass struct{ done chan<- struct{} }

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
