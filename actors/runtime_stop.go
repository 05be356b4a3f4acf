package actors

import (
	"context"
	"fmt"
	"slices"
)

// Stop stops the runtime gracefully: no pass starts another batch, in-flight batches
// finish, and every actor is stopped (protoactor's ActorSystem.Shutdown stops none). When
// ctx ends before the batches finish (the grace period), their contexts are cancelled;
// a batch is one transaction, so a cancelled one leaves nothing half-deleted. Stop then
// still waits for them to return, so a pass must honour its context.
func (r *Runtime) Stop(ctx context.Context) error {
	r.mu.Lock()
	if !r.started || r.stopped {
		r.mu.Unlock()
		return nil
	}
	r.stopped = true
	cells := slices.Clone(r.order)
	r.mu.Unlock()

	graceful := r.drain(ctx, cells)
	root := r.system.Root
	for _, g := range r.groups {
		_ = root.StopFuture(g).Wait()
	}
	_ = root.PoisonFuture(r.d.hub).Wait() // delivers the events still queued
	for _, pid := range r.admission {
		_ = root.StopFuture(pid).Wait()
	}
	r.cancel()
	if r.ownSystem {
		r.system.Shutdown()
	}
	if !graceful {
		return fmt.Errorf("retention: stop grace period ended, in-flight batches were cancelled: %w", ctx.Err())
	}
	return nil
}

// drain asks every live pass to finish its batch and waits; past ctx it cancels the
// batches and waits for them to return. It reports whether the drain beat ctx. Within ctx
// it then waits for each pass's sweep to be closed too (its hygiene run and its sweep
// lock given back, see whenIdle), so a node that leaves its cluster after Stop leaves
// with its locks free and the new owner's first try succeeds; past ctx it stops waiting
// for closes, and a lock still held goes with the process's connections.
func (r *Runtime) drain(ctx context.Context, cells []*passCell) bool {
	type drainWait struct{ done, closed, gone <-chan struct{} }
	var waits []drainWait
	for _, c := range cells {
		if _, degraded := c.gaveUpWith(); degraded || c.pid.Load() == nil {
			continue
		}
		done, closed := make(chan struct{}), make(chan struct{})
		waits = append(waits, drainWait{done: done, closed: closed, gone: c.goneCh()})
		r.system.Root.Send(c.pid.Load(), &drainPass{done: done, closed: closed})
	}
	graceful := true
	for _, w := range waits {
		select {
		case <-w.done:
			continue
		case <-w.gone: // supervision stopped it before it saw the request
			continue
		case <-ctx.Done():
		}
		graceful = false
		r.cancel()
		select {
		case <-w.done:
		case <-w.gone:
		}
	}
	if !graceful {
		return false
	}
	for _, w := range waits {
		select {
		case <-w.closed:
		case <-w.gone:
		case <-ctx.Done():
			return true // the batches finished; only a close is left, bounded by its own timeouts
		}
	}
	return true
}
