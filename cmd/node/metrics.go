package main

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/node/metrics"
)

// registry is the node's own Prometheus registry: the observer's metrics with a zero
// series for every pass, the backlog and held rows of every table (backlog, from
// backlogCollector), and the Go runtime and process collectors.
func (n *node) registry(rt *actors.Runtime, m *metrics.Observer, backlog *metrics.BacklogCollector) (*prometheus.Registry, error) {
	reg := prometheus.NewRegistry()
	if err := m.Register(reg, rt, metrics.Options{ReadyAfterFailures: n.cfg.ReadyAfterFailures()}); err != nil {
		return nil, err
	}
	if err := metrics.RegisterProcess(reg); err != nil {
		return nil, err
	}
	if err := reg.Register(backlog); err != nil {
		return nil, err
	}
	if err := reg.Register(metrics.NewVacuumCollector(n.metricTables())); err != nil {
		return nil, err
	}
	if n.cluster != nil {
		if err := n.cluster.member.Register(reg); err != nil {
			return nil, err
		}
	}
	return reg, nil
}

// backlogCollector measures every table's backlog for /metrics and the dashboard and,
// with the ledger on, keeps the measurements in the ledger's backlog history. It is
// built before the runtime so its SweepSampler can hear every sweep's end.
func (n *node) backlogCollector() *metrics.BacklogCollector {
	// Each table reads its quarantine from the ledger (none without one).
	backlog := metrics.NewBacklogCollector(n.metricTables())
	if n.ledger != nil {
		backlog.Recorder = n.ledger
	}
	return backlog
}

func (n *node) metricTables() []metrics.Table {
	var tables []metrics.Table // a Go pass has no table to sample
	for _, p := range n.passes {
		if p.IsTable() {
			tables = append(tables, metrics.Table{Table: p.Table, Options: p.Options()})
		}
	}
	return tables
}
