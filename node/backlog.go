package node

import (
	"context"
	"time"

	"github.com/retentionkit/retention/node/metrics"
	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/ledger"
)

// MeasureBacklog is t's backlog at cutoff: the one definition Status, `retention
// status`, `sweep --dry-run`, /metrics and the dashboard share. A ledger (l, nil for
// none) not migrated yet has no quarantine table and so no quarantined row; the table is
// measured without one rather than failing.
func MeasureBacklog(ctx context.Context, l *ledger.Ledger, t *passes.Table, cutoff time.Time) (passes.Backlog, error) {
	if l != nil {
		ok, err := l.HasTable(ctx, "quarantine")
		if err != nil {
			return passes.Backlog{}, err
		}
		if !ok {
			t = t.WithQuarantine(nil)
		}
	}
	return t.Backlog(ctx, cutoff)
}

// BacklogCollector measures the backlog of every table pass in ps for /metrics and the
// dashboard (a Go pass has no table to measure) and, with a ledger (l not nil), keeps
// the measurements in its backlog history. Build it before the runtime, so its
// SweepSampler can hear every sweep's end.
func BacklogCollector(ps []Pass, l *ledger.Ledger) *metrics.BacklogCollector {
	backlog := metrics.NewBacklogCollector(MetricTables(ps))
	if l != nil {
		backlog.Recorder = l
	}
	return backlog
}

// MetricTables are the tables of the table passes in ps with their options, what the
// backlog and vacuum collectors measure.
func MetricTables(ps []Pass) []metrics.Table {
	var tables []metrics.Table
	for _, p := range ps {
		if p.IsTable() {
			tables = append(tables, metrics.Table{Table: p.Table, Options: p.Options()})
		}
	}
	return tables
}
