package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	rnode "github.com/retentionkit/retention/node"
	"github.com/retentionkit/retention/passes"
)

// errNoBacklog is a Go pass's backlog: the node has no table to count for it.
var errNoBacklog = errors.New("a Go pass has no backlog")

// backlog measures pass i's backlog at cutoff (node.MeasureBacklog, the one definition
// `status`, `sweep --dry-run`, /metrics and the dashboard share).
func (n *node) backlog(ctx context.Context, i int, cutoff time.Time) (passes.Backlog, error) {
	t := n.passes[i].Table
	if t == nil {
		return passes.Backlog{}, fmt.Errorf("pass %s: %w", n.passes[i].Name(), errNoBacklog)
	}
	return rnode.MeasureBacklog(ctx, n.ledger, t, cutoff)
}
