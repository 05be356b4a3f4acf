package node

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/node/admin"
	"github.com/retentionkit/retention/node/health"
	"github.com/retentionkit/retention/passes/ledger"
)

// Verdict is the node's health as /readyz and the dashboard judge it (health.Judge on
// the runtime's status): Starting until Start and after Stop, as /readyz answers.
func (n *Node) Verdict() health.Verdict {
	if !n.started.Load() || n.stopped.Load() {
		return health.Verdict{State: health.Starting}
	}
	return health.Judge(n.rt.Status(), n.cfg.ReadyAfterFailures())
}

// ReadVerdict asks the node serving its admin API on addr (host:port) for its verdict
// (GET /readyz, which needs no token), so `retention status` prints what the probe
// answers while a node runs. ctx bounds the request.
func ReadVerdict(ctx context.Context, addr string) (health.Verdict, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/readyz", nil)
	if err != nil {
		return health.Verdict{}, fmt.Errorf("readyz: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return health.Verdict{}, fmt.Errorf("readyz: %w", err)
	}
	defer resp.Body.Close()
	var r admin.Readiness
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return health.Verdict{}, fmt.Errorf("readyz at %s: %w", addr, err)
	}
	return r.Verdict(), nil
}

// LedgerVerdict judges, with health.Judge, the passes named as the ledger l last saw
// them, for when no node answers: a pass whose dead letter is unresolved was stopped by
// supervision, and a pass's failed runs since its last one that did not fail are its
// sweeps failed in a row (counted among its last StatusRuns), judged against
// failedSweeps as /readyz judges them. Configuration drift is not in the ledger: a
// drifting pass shows as failing its sweeps.
func LedgerVerdict(ctx context.Context, l *ledger.Ledger, names []string, failedSweeps int) (health.Verdict, error) {
	letters, err := l.DeadLetters(ctx)
	if err != nil {
		return health.Verdict{}, err
	}
	var st actors.Status
	for _, name := range names {
		p := actors.PassStatus{Name: name}
		runs, err := l.Runs(ctx, name, StatusRuns)
		if err != nil {
			return health.Verdict{}, err
		}
		for _, r := range runs {
			if r.State == ledger.InProgress || r.State == ledger.Pending {
				continue // not judged yet
			}
			if r.State != ledger.Failed {
				break
			}
			if p.ConsecutiveFailures == 0 && r.Error != nil {
				p.LastError = *r.Error
			}
			p.ConsecutiveFailures++
		}
		for _, d := range letters {
			if d.PassName == name && d.ResolvedTime == nil {
				p.Degraded, p.LastError = true, d.Error
				break
			}
		}
		st.Passes = append(st.Passes, p)
	}
	return health.Judge(st, failedSweeps), nil
}
