package actortest

import (
	"sync"

	"github.com/retentionkit/retention/actors"
)

// Probe is an observer that keeps every event it hears, for a test to look through.
type Probe struct {
	mu     sync.Mutex
	events []actors.Event
}

// Observe records e.
func (p *Probe) Observe(e actors.Event) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.events = append(p.events, e)
	return nil
}

// Events returns every event so far, in the order heard.
func (p *Probe) Events() []actors.Event {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]actors.Event(nil), p.events...)
}

// Match is a predicate over events.
type Match func(actors.Event) bool

// Is matches every event of type T.
func Is[T actors.Event]() Match {
	return func(e actors.Event) bool { _, ok := e.(T); return ok }
}

// Where matches events of type T that satisfy pred.
func Where[T actors.Event](pred func(T) bool) Match {
	return func(e actors.Event) bool {
		t, ok := e.(T)
		return ok && pred(t)
	}
}

// Of matches every event of the named pass that m matches.
func Of(name string, m Match) Match {
	return func(e actors.Event) bool { return e.PassName() == name && m(e) }
}

// Filter returns the events m matches.
func Filter[T actors.Event](events []actors.Event, m Match) []T {
	var out []T
	for _, e := range events {
		if t, ok := e.(T); ok && m(e) {
			out = append(out, t)
		}
	}
	return out
}
