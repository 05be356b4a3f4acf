package node

import (
	"context"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/retentionkit/retention/passes/ledger"
)

// Start creates or upgrades the ledger tables (unless the file leaves that to the
// migrate command), starts every pass and marks the admin handler ready, so /readyz
// never reports a node whose passes are not running.
func (n *Node) Start(ctx context.Context) error {
	if n.closed {
		return errClosed
	}
	if n.ledger != nil && n.cfg.LedgerMigrate() {
		if _, err := ledger.MigrateTables(ctx, n.db, n.cfg.LedgerPrefix()); err != nil {
			return err
		}
	}
	if err := n.rt.Start(ctx); err != nil {
		return err
	}
	n.admin.SetReady(true)
	n.log.WithField("passes", len(n.rt.PassNames())).Info("node running")
	return nil
}

// Stop marks the node not ready and stops the passes; in-flight batches finish
// until ctx ends, then are cancelled. The database stays open for Status.
func (n *Node) Stop(ctx context.Context) error {
	n.admin.SetReady(false)
	return n.rt.Stop(ctx)
}

// Close releases what Open acquired (the backlog sampler and the database), once; a
// second call does nothing. Stop the node first: Close does not wait for sweeps.
func (n *Node) Close() {
	if n.closed {
		return
	}
	n.closed = true
	if n.stopSampling != nil {
		n.stopSampling()
	}
	_ = n.db.Close()
}

// Handler is the admin API (/healthz, /readyz, /passes, /metrics, the dashboard
// under /ui/) for the host to mount on its own server.
func (n *Node) Handler() http.Handler { return n.admin }

// Gatherer is the node's metrics registry, for a host that serves /metrics itself.
func (n *Node) Gatherer() prometheus.Gatherer { return n.reg }

// Passes are the node's passes, the file's table passes first, then the Go passes.
func (n *Node) Passes() []Pass { return append([]Pass(nil), n.passes...) }
