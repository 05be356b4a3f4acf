package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/retentionkit/retention/passes"
)

// errNoBacklog is a Go pass's backlog: the node has no table to count for it.
var errNoBacklog = errors.New("a Go pass has no backlog")

// backlog measures pass i's backlog at cutoff: the one definition `status`,
// `sweep --dry-run`, /metrics and the dashboard share (passes.Backlog). A ledger not
// migrated yet has no quarantine table and so no quarantined row; the table is measured
// without one rather than failing.
func (n *node) backlog(ctx context.Context, i int, cutoff time.Time) (passes.Backlog, error) {
	t := n.passes[i].Table
	if t == nil {
		return passes.Backlog{}, fmt.Errorf("pass %s: %w", n.passes[i].Name(), errNoBacklog)
	}
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
