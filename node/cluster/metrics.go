package cluster

import (
	"context"
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// memberMetrics are the member's own series; the reconciler refreshes the gauges every
// round.
type memberMetrics struct {
	members  prometheus.Gauge
	owned    prometheus.Gauge
	fencings prometheus.Counter
}

func newMemberMetrics() *memberMetrics {
	return &memberMetrics{
		members:  prometheus.NewGauge(prometheus.GaugeOpts{Name: "retention_cluster_members", Help: "Members in this member's view of the cluster topology."}),
		owned:    prometheus.NewGauge(prometheus.GaugeOpts{Name: "retention_cluster_owned_passes", Help: "Passes placed on this member (drain helpers not counted)."}),
		fencings: prometheus.NewCounter(prometheus.CounterOpts{Name: "retention_cluster_fencing_exits_total", Help: "Times this member fenced itself (it exits with code 3 right after)."}),
	}
}

func (mm *memberMetrics) observe(members, owned int) {
	mm.members.Set(float64(members))
	mm.owned.Set(float64(owned))
}

// Register registers the member's metrics on reg: members, owned passes, fencing exits
// and the cluster-wide delete slots in use per database (read through the view's
// slot reader, at most once per scrape).
func (m *Member) Register(reg prometheus.Registerer) error {
	return errors.Join(
		reg.Register(m.metrics.members),
		reg.Register(m.metrics.owned),
		reg.Register(m.metrics.fencings),
		reg.Register(slotsCollector{m}),
	)
}

var slotsDesc = prometheus.NewDesc("retention_cluster_slots_in_use", "Cluster-wide delete slots held now, per database, by every member.", []string{"database"}, nil)

// slotsCollector reads the slots in use when scraped.
type slotsCollector struct{ m *Member }

func (c slotsCollector) Describe(ch chan<- *prometheus.Desc) { ch <- slotsDesc }

func (c slotsCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	slots, err := c.m.slots(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(slotsDesc, err)
		return
	}
	for _, s := range slots {
		ch <- prometheus.MustNewConstMetric(slotsDesc, prometheus.GaugeValue, float64(s.InUse), s.Database)
	}
}
