package main

import (
	"context"
	"fmt"
	"io"
	"time"

	rnode "github.com/retentionkit/retention/node"
)

// verdictTimeout bounds status's request to the node's /readyz, so a firewalled
// node.admin address makes status read the ledger instead of hanging.
const verdictTimeout = 2 * time.Second

// printHealth prints the health verdict line /readyz and the dashboard show
// (node/health.Judge): the running node's own, from its /readyz on node.admin, or, where
// no node answers there, judged from the ledger (node.LedgerVerdict).
func (n *node) printHealth(ctx context.Context, out io.Writer) error {
	if addr := n.cfg.Node.Admin; addr != "" {
		rctx, cancel := context.WithTimeout(ctx, verdictTimeout)
		v, err := rnode.ReadVerdict(rctx, addr)
		cancel()
		if err == nil {
			_, err = fmt.Fprintf(out, "health: %s (the running node's /readyz on %s)\n", v, addr)
			return err
		}
	}
	if n.ledger == nil {
		_, err := fmt.Fprintln(out, "health: not known: no node answers on node.admin and the ledger is disabled")
		return err
	}
	v, err := rnode.LedgerVerdict(ctx, n.ledger, n.passNames(), n.cfg.ReadyAfterFailures())
	if err != nil {
		_, err = fmt.Fprintf(out, "health: cannot read the ledger: %v\n", err)
		return err
	}
	_, err = fmt.Fprintf(out, "health: %s (from the ledger: no node answers on node.admin)\n", v)
	return err
}
