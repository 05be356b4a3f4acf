package main

import (
	"github.com/retentionkit/retention/node/admin"
	"github.com/retentionkit/retention/node/metrics"
	"github.com/retentionkit/retention/node/ui"
	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/ledger"
)

// dashboard is the web dashboard the admin endpoint serves under /ui/, over what the
// admin handler serves (acfg: the runtime, the ledger, the token, the cluster source),
// the backlog measurement /metrics shows, and the metadata cleanup's plan as the file
// gives it (nil when the cleanup is off).
func (n *node) dashboard(acfg admin.Config, backlog *metrics.BacklogCollector) (*ui.Handler, error) {
	var plan *ledger.Plan
	if n.ledger != nil && n.cfg.CleanupEnabled() {
		plan = n.plan
	}
	return ui.New(ui.Config{ReadyAfterFailures: n.cfg.ReadyAfterFailures(),
		Runtime: acfg.Runtime, Ledger: acfg.Ledger, Token: acfg.Token, Backlog: backlog, Cluster: acfg.Cluster,
		Cleanup: plan, CleanupDefaulted: n.cfg.MetadataCleanup.RetentionPeriod == nil,
		Redact: func(s string) string { return passes.RedactTextFor(n.cfg.Database.Driver, s, n.cfg.Database.DSN) },
	})
}
