package node

import (
	"context"
	"errors"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/retentionkit/retention/node/cluster"
)

// errStarted is what a second Start answers: a runtime starts once.
var errStarted = errors.New("node: started already")

// Start runs what Open built: the admin listener (with Options.ServeAdmin), every pass,
// in cluster mode the member's reconciler and watchdog, the readiness /readyz reports,
// and with a ledger the live settings and the work-queue poller. What it starts, Stop
// stops; a Start that fails leaves the rest to Close, like every other step.
func (n *Node) Start(ctx context.Context) error {
	switch {
	case n.closed:
		return errClosed
	case n.started.Load():
		return errStarted
	}
	if err := n.serveAdmin(); err != nil {
		return err
	}
	if err := n.rt.Start(ctx); err != nil {
		return badConfig(err)
	}
	n.started.Store(true)
	if n.cluster != nil {
		n.cluster.member.Serve(ctx, n.rt)
		n.watchFence()
	}
	n.admin.SetReady(true)
	n.stopPolling = n.startPolling(ctx)
	n.log.WithField("passes", len(n.rt.PassNames())).Info("node running")
	return nil
}

// watchFence forwards the member's fencing to Fenced and keeps it for Stop, until Stop.
func (n *Node) watchFence() {
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		select {
		case f := <-n.cluster.member.Fenced():
			n.fence.Store(f)
			n.fenced <- f // buffered: delivered once, whether or not anyone listens
		case <-stop:
		}
	}()
	n.stopWatch = func() { close(stop); <-done }
}

// Fenced delivers, once, why a cluster member fenced itself (it dropped out of the
// topology): the host then stops the node, and `retention run` exits with
// cluster.ExitFenced so its process manager starts it as a new member. Outside cluster
// mode nothing is ever delivered.
func (n *Node) Fenced() <-chan *cluster.FencedError { return n.fenced }

// Stop marks the node not ready, stops the live settings and the poller (a poll in
// flight closes its run first), then the passes: in-flight batches finish until ctx
// ends, then are cancelled (logged, not returned: the node stopped either way). A
// cluster member then leaves, gracefully unless it was fenced, so the others take its
// passes at once and find their locks free. Stop returns the *cluster.FencedError of a
// fenced member, else ErrStoppedDegraded when supervision had given up on a pass, else
// nil. The database stays open for Status until Close; a second Stop does nothing.
func (n *Node) Stop(ctx context.Context) error {
	if !n.started.Load() || n.stopped.Load() {
		return nil
	}
	n.stopped.Store(true)
	n.admin.SetReady(false)
	n.stopPolling()
	if err := n.rt.Stop(ctx); err != nil {
		n.log.WithError(err).Warn("stopped after cancelling in-flight batches")
	}
	n.stopWatch()
	fence := n.fence.Load()
	if n.cluster != nil {
		leave(n.cluster.member, fence == nil)
	}
	if fence != nil {
		return fence
	}
	if n.rt.Status().Degraded {
		return ErrStoppedDegraded
	}
	return nil
}

// Close releases everything Open and Start acquired, the last first, in one place: the
// admin listener, the heartbeat, the backlog sampler, the cluster membership and its
// slots, the database. A node started and not stopped is stopped first, its in-flight
// batches cancelled at once. A second call does nothing.
func (n *Node) Close() {
	if n.closed {
		return
	}
	if n.started.Load() && !n.stopped.Load() {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_ = n.Stop(ctx)
	}
	n.closed = true
	n.undo.close()
}

// Handler is the admin API (/healthz, /readyz, /passes, /metrics, the dashboard
// under /ui/) for the host to mount on its own server.
func (n *Node) Handler() http.Handler { return n.admin }

// Gatherer is the node's metrics registry, for a host that serves /metrics itself.
func (n *Node) Gatherer() prometheus.Gatherer { return n.reg }

// Passes are the node's passes, the file's table passes first, then the Go passes.
func (n *Node) Passes() []Pass { return append([]Pass(nil), n.passes...) }
