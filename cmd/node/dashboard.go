package main

import (
	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/node/admin"
	"github.com/retentionkit/retention/node/metrics"
	"github.com/retentionkit/retention/node/ui"
	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/ledger"
)

// dashboard is the web dashboard the admin endpoint serves under /ui/: the runtime, the
// ledger, the backlog measurement /metrics shows, and the metadata cleanup's plan as
// the file gives it (nil when the cleanup is off). cluster is what admin.Config.Cluster
// gets, nil outside cluster mode.
func (n *node) dashboard(rt *actors.Runtime, backlog *metrics.BacklogCollector, cluster admin.ClusterSource) (*ui.Handler, error) {
	var plan *ledger.Plan
	if n.ledger != nil && n.cfg.CleanupEnabled() {
		plan = n.plan
	}
	return ui.New(ui.Config{
		Runtime: rt, Ledger: n.ledger, Token: n.cfg.Node.AdminToken, Backlog: backlog, Cluster: cluster,
		Cleanup: plan, CleanupDefaulted: n.cfg.MetadataCleanup.RetentionPeriod == nil,
		Redact: func(s string) string { return passes.RedactText(s, n.cfg.Database.DSN) },
	})
}
