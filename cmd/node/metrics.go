package main

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/node/metrics"
)

// registry is the node's own Prometheus registry: the observer's metrics with a zero
// series for every pass, the backlog and held rows of every table, and the Go runtime
// and process collectors.
//
// It also returns the backlog collector, whose measurement the dashboard shows and,
// with the ledger on, keeps in the ledger's backlog history.
func (n *node) registry(rt *actors.Runtime, m *metrics.Observer) (*prometheus.Registry, *metrics.BacklogCollector, error) {
	reg := prometheus.NewRegistry()
	if err := m.Register(reg, rt, metrics.Options{ReadyAfterFailures: n.cfg.ReadyAfterFailures()}); err != nil {
		return nil, nil, err
	}
	if err := metrics.RegisterProcess(reg); err != nil {
		return nil, nil, err
	}
	tables := make([]metrics.Table, len(n.tables))
	for i, t := range n.tables {
		tables[i] = metrics.Table{Table: t, Options: n.opts[i]}
	}
	// Each table reads its quarantine from the ledger (none without one).
	backlog := metrics.NewBacklogCollector(tables)
	if n.ledger != nil {
		backlog.Recorder = n.ledger
	}
	if err := reg.Register(backlog); err != nil {
		return nil, nil, err
	}
	if err := reg.Register(metrics.NewVacuumCollector(tables)); err != nil {
		return nil, nil, err
	}
	if n.cluster != nil {
		if err := n.cluster.member.Register(reg); err != nil {
			return nil, nil, err
		}
	}
	return reg, backlog, nil
}
