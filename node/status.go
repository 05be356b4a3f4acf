package node

import (
	"context"
	"time"

	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/ledger"
)

// PassStatus is what `retention status` shows of one pass: its backlog (table passes
// only) and its last runs in the ledger.
type PassStatus struct {
	Name string
	// Backlog is the table's backlog now; nil for a Go pass, a disabled pass, or a
	// measurement that failed.
	Backlog *passes.Backlog
	// LastRun is the newest run the ledger holds; nil without a ledger or a run.
	LastRun *ledger.Run
	// FailedRuns counts the failed runs among the last StatusRuns.
	FailedRuns int
}

// StatusRuns is how many recent runs Status counts failures in.
const StatusRuns = 50

// Status reports every pass, in the node's order, so an embedding program can show
// what the status command shows without parsing its table.
func (n *Node) Status(ctx context.Context) []PassStatus {
	out := make([]PassStatus, 0, len(n.passes))
	for _, p := range n.passes {
		st := PassStatus{Name: p.Name()}
		if opts := p.Options(); opts.Enabled() && p.IsTable() {
			if b, err := MeasureBacklog(ctx, n.ledger, p.Table, opts.Cutoff(time.Now())); err == nil {
				st.Backlog = &b
			}
		}
		if n.ledger != nil {
			if runs, err := n.ledger.Runs(ctx, p.Name(), StatusRuns); err == nil && len(runs) > 0 {
				st.LastRun = &runs[0]
				for _, r := range runs {
					if r.State == ledger.Failed {
						st.FailedRuns++
					}
				}
			}
		}
		out = append(out, st)
	}
	return out
}
