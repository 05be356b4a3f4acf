package main

import (
	"context"
	"time"

	"github.com/retentionkit/retention/passes"
)

// backlog measures table pass i's backlog at cutoff: the one definition `status`,
// `sweep --dry-run`, /metrics and the dashboard share (passes.Backlog). A ledger not
// migrated yet has no quarantine table and so no quarantined row; the table is measured
// without one rather than failing.
func (n *node) backlog(ctx context.Context, i int, cutoff time.Time) (passes.Backlog, error) {
	t := n.tables[i]
	if n.ledger != nil {
		ok, err := n.ledger.HasTable(ctx, "quarantine")
		if err != nil {
			return passes.Backlog{}, err
		}
		if !ok {
			t = t.WithQuarantine(nil)
		}
	}
	return t.Backlog(ctx, cutoff)
}
