package main

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/retentionkit/retention/actors"
	rnode "github.com/retentionkit/retention/node"
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

// backlogCollector measures every table's backlog (node.BacklogCollector). It is built
// before the runtime so its SweepSampler can hear every sweep's end.
func (n *node) backlogCollector() *metrics.BacklogCollector {
	return rnode.BacklogCollector(n.passes, n.ledger)
}

func (n *node) metricTables() []metrics.Table { return rnode.MetricTables(n.passes) }
