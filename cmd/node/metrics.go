package main

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/node/metrics"
)

// registry is the node's own Prometheus registry: the observer's metrics with a zero
// series for every pass, the backlog and held rows of every table, and the Go runtime
// and process collectors.
func (n *node) registry(rt *actors.Runtime, m *metrics.Observer) (*prometheus.Registry, error) {
	reg := prometheus.NewRegistry()
	if err := m.Register(reg, rt, metrics.Options{ReadyAfterFailures: n.cfg.ReadyAfterFailures()}); err != nil {
		return nil, err
	}
	if err := metrics.RegisterProcess(reg); err != nil {
		return nil, err
	}
	tables := make([]metrics.Table, len(n.tables))
	for i, t := range n.tables {
		tables[i] = metrics.Table{Table: t, Options: n.opts[i]}
	}
	// The ledger's quarantine counts join the held rows; without a ledger there is no
	// quarantine and held rows are those block children keep.
	var quarantine metrics.QuarantineCounter
	if n.ledger != nil {
		quarantine = n.ledger
	}
	if err := reg.Register(metrics.NewBacklogCollector(tables, quarantine)); err != nil {
		return nil, err
	}
	if n.cluster != nil {
		if err := n.cluster.member.Register(reg); err != nil {
			return nil, err
		}
	}
	return reg, nil
}
