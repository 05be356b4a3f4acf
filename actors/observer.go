package actors

import (
	"github.com/asynkron/protoactor-go/actor"

	"github.com/retentionkit/retention/core/observers"
)

// Observer hears every event of every pass, in the order each pass published them. It
// runs on the observer hub's goroutine, never on a pass's: an observer that fails, panics
// or blocks never delays or breaks a pass (a blocking one delays only the observers after
// it). A failure is contained and reported to the runtime's failure reporter.
type Observer interface {
	Observe(e Event) error
}

// ObserverFunc adapts a function to an Observer.
type ObserverFunc func(e Event) error

// Observe calls f.
func (f ObserverFunc) Observe(e Event) error { return f(e) }

// ActorObserver forwards every event to an actor of the caller's, so an observer can be
// an actor with a mailbox of its own.
func ActorObserver(system *actor.ActorSystem, pid *actor.PID) Observer {
	return ObserverFunc(func(e Event) error {
		system.Root.Send(pid, e)
		return nil
	})
}

// hub is the observer hub actor: pass actors send it events, and it tells the observers
// in registration order through a guarded composite.
type hub struct {
	observers *observers.Composite[Observer]
}

func newHubProps(c *observers.Composite[Observer]) *actor.Props {
	return actor.PropsFromProducer(func() actor.Actor { return &hub{observers: c} })
}

func (h *hub) Receive(ctx actor.Context) {
	if e, ok := ctx.Message().(Event); ok {
		h.observers.Notify(func(o Observer) error { return o.Observe(e) })
	}
}
