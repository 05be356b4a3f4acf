package metrics

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/passes"
)

// Partition outcomes are counted by outcome, the report before a drop is not counted
// twice, and the retired rows are added as the estimate the report names.
func TestPartitionOutcomesAreCounted(t *testing.T) {
	t.Parallel()
	m := NewObserver()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(m.collectors()...)
	m.zero("a")
	for _, o := range []passes.PartitionOutcome{passes.PartitionRetiring, passes.PartitionRetired, passes.PartitionRetiring, passes.PartitionRetired, passes.PartitionContended, passes.PartitionGone} {
		if err := m.Observe(actors.PartitionEvent{Name: "a", Sweep: 1, Report: passes.PartitionReport{Outcome: o, EstimatedRows: 1000}}); err != nil {
			t.Fatal(err)
		}
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		for _, s := range mf.GetMetric() {
			name := mf.GetName()
			for _, l := range s.GetLabel() {
				if l.GetName() == "outcome" {
					name += "/" + l.GetValue()
				}
			}
			got[name] = s.GetCounter().GetValue()
		}
	}
	for name, want := range map[string]float64{"retention_partitions_total/retired": 2, "retention_partitions_total/contended": 1,
		"retention_partitions_total/kept": 0, "retention_partitions_total/gone": 1, "retention_partition_rows_estimated_total": 2000} {
		if v, ok := got[name]; !ok || v != want {
			t.Errorf("%s = %v (present %v), want %v", name, v, ok, want)
		}
	}
}
