package observers

import (
	"context"
	"slices"
)

// Composite tells every observer of type T of an event, one after the other, in the
// order they were given. It copies the list when it is built, so observers added to the
// caller's slice later are not told, and the set cannot change under a notification.
//
// Do not make the type that delegates to a Composite one of its own observers: it would
// hear its own events.
type Composite[T any] struct {
	observers []T
	guard     *Guard
}

// NewComposite returns a composite over a snapshot of observers, guarded by guard; a nil
// guard contains failures and reports them to nobody.
func NewComposite[T any](guard *Guard, observers ...T) *Composite[T] {
	if guard == nil {
		guard = &Guard{}
	}
	return &Composite[T]{observers: slices.Clone(observers), guard: guard}
}

// Len returns how many observers the composite tells.
func (c *Composite[T]) Len() int { return len(c.observers) }

// Notify calls tell for each observer in order. A failing observer is contained, and
// the ones after it are still told.
func (c *Composite[T]) Notify(tell func(T) error) {
	for _, o := range c.observers {
		c.guard.Run(o, func() error { return tell(o) })
	}
}

// NotifyAsync calls tell for each observer in order with the operation's context. It
// checks ctx before each observer, so one that ignores its context cannot let the next be
// told after the operation was cancelled; when ctx ends, it returns ctx's error and tells
// nobody else. Other failures are contained, and the ones after still hear the event.
func (c *Composite[T]) NotifyAsync(ctx context.Context, tell func(context.Context, T) error) error {
	for _, o := range c.observers {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := c.guard.RunContext(ctx, o, func(ctx context.Context) error { return tell(ctx, o) }); err != nil {
			return err
		}
	}
	return nil
}
