package actors

import (
	"context"
	"fmt"
	"time"

	"github.com/retentionkit/retention/passes"
)

// ping asks a pass actor to answer; pong is its answer. The actor answers from its
// mailbox while a batch runs on its worker, so a pass that is busy deleting still answers,
// and one whose mailbox is stuck does not.
type (
	ping struct{}
	pong struct{}
)

// Ping is a liveness check: it sends every pass actor that is meant to be running (not
// stopped by supervision, which is readiness's business) a message and waits for its
// answer, all within ctx's deadline (5s per pass without one). An error names the first
// pass that did not answer.
func (r *Runtime) Ping(ctx context.Context) error {
	r.mu.Lock()
	system, running := r.system, r.started && !r.stopped
	cells := append([]*passCell(nil), r.order...)
	r.mu.Unlock()
	if !running || system == nil {
		return ErrNotRunning
	}
	for _, c := range cells {
		pid := c.pid.Load()
		if _, degraded := c.gaveUpWith(); degraded || pid == nil {
			continue
		}
		timeout := 5 * time.Second // each pass's bound when ctx has no deadline
		if dl, ok := ctx.Deadline(); ok {
			timeout = time.Until(dl) // what is left of it, so the whole check stays within ctx
		}
		if timeout <= 0 {
			return fmt.Errorf("pass %q not asked: %w", c.reg.Name, context.DeadlineExceeded)
		}
		res, err := system.Root.RequestFuture(pid, &ping{}, timeout).Result()
		if err != nil && c.pid.Load() != pid {
			continue // deactivated while asked: placement moved it
		}
		if err != nil {
			return fmt.Errorf("pass %q did not answer within %v: %w", c.reg.Name, timeout.Round(time.Millisecond), err)
		}
		if _, ok := res.(*pong); !ok {
			return fmt.Errorf("pass %q answered %T", c.reg.Name, res)
		}
	}
	return nil
}

// Registrations returns the registered passes, in registration order (the node's own
// internal passes too), so an observer such as the metrics can know every pass and its
// options before the first event.
func (r *Runtime) Registrations() []passes.Registration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.registry.All()
}
