package ledger

import (
	"context"
	"time"

	"github.com/retentionkit/retention/core/clock"
	"github.com/retentionkit/retention/core/polling"
	"github.com/retentionkit/retention/passes"
)

// NodeHeartbeat keeps a node's heartbeat fresh while the node runs, so no other node
// takes its open runs for abandoned. It is a loop of its own, outside the runtime's
// admission: a heartbeat must never wait behind a long batch.
type NodeHeartbeat struct {
	Ledger *Ledger
	Node   Node
	// Clock times the heartbeats and stamps them; nil is the wall clock.
	Clock clock.Clock
	// Interval is the wait between heartbeats; zero means DefaultHeartbeatInterval. Each
	// write is bounded by it too, so a hung database delays the next one by no more.
	Interval time.Duration
	// Reporter hears of failed heartbeats; nil hears nothing.
	Reporter polling.Reporter
}

// Run heartbeats until stop ends.
func (h *NodeHeartbeat) Run(stop context.Context) {
	interval := h.Interval
	if interval <= 0 {
		interval = DefaultHeartbeatInterval
	}
	clk := clock.OrReal(h.Clock)
	polling.Loop{Interval: interval, Clock: h.Clock, Reporter: h.Reporter, Pass: func(ctx context.Context) (polling.Outcome, error) {
		ctx, cancel := context.WithTimeout(ctx, interval)
		defer cancel()
		return polling.WaitForInterval, h.Ledger.Heartbeat(ctx, h.Node, clk.Now())
	}}.Run(stop)
}

// RunRecovery closes the runs of nodes that died: every open run whose owner's last
// heartbeat is older than the stale bound becomes Failed with stop reason "abandoned",
// keeping the counts it recorded. Any node can do it, at startup and every interval;
// two doing it at once close each run once (the update only touches open runs). It also
// prunes the rows of nodes silent for NodeRetention that own no open run.
type RunRecovery struct {
	ledger     *Ledger
	staleAfter time.Duration
	interval   time.Duration
}

// NewRunRecovery returns the recovery of l's abandoned runs: a run is abandoned once its
// owner has not heartbeat for staleAfter (0: DefaultStaleAfter), checked every interval
// (0: DefaultHeartbeatInterval).
func NewRunRecovery(l *Ledger, staleAfter, interval time.Duration) *RunRecovery {
	if staleAfter <= 0 {
		staleAfter = DefaultStaleAfter
	}
	if interval <= 0 {
		interval = DefaultHeartbeatInterval
	}
	return &RunRecovery{ledger: l, staleAfter: staleAfter, interval: interval}
}

// Registration returns the recovery as a pass on its internal name. The runtime's cutoff
// (now - staleAfter) is the heartbeat bound. Its target is the node table, so it never
// queues behind the metadata cleanup at the per-table gate.
func (r *RunRecovery) Registration() passes.Registration {
	opts := passes.DefaultOptions()
	opts.RetentionPeriod = passes.Retain(r.staleAfter)
	opts.SweepInterval = r.interval
	opts.MaxStartupStagger = 0
	opts.BatchSize = 100
	return passes.Registration{Name: NameRunRecovery, Target: r.ledger.table("node"), Options: opts,
		New: passes.Reuse(passes.PassFunc(r.purgeBatch))}
}

func (r *RunRecovery) purgeBatch(ctx context.Context, batchSize int, staleBefore time.Time) (int, error) {
	closed, err := r.ledger.CloseAbandoned(ctx, staleBefore, staleBefore.Add(r.staleAfter), batchSize)
	if err != nil || closed == batchSize {
		return closed, err
	}
	return closed, r.ledger.PruneNodes(ctx, staleBefore.Add(-NodeRetention))
}
