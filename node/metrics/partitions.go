package metrics

import (
	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/passes"
)

// partitionOutcomes are the outcomes retention_partitions_total shows from startup:
// "expired but contended" and "kept" apart from "retired", "gone" (retired by another
// sweep of the table, a drain helper) apart from all three, and all of them apart from
// a pass with nothing expired (every series at zero).
var partitionOutcomes = []passes.PartitionOutcome{passes.PartitionRetired, passes.PartitionContended, passes.PartitionKept, passes.PartitionGone}

// zeroPartitions creates a pass's partition series at zero.
func (m *Observer) zeroPartitions(pass string) {
	for _, o := range partitionOutcomes {
		m.partitions.WithLabelValues(pass, string(o))
	}
	m.partitionRows.WithLabelValues(pass)
}

// partitionEvent counts one partition outcome; retiring (the report before the drop)
// is not an outcome of its own.
func (m *Observer) partitionEvent(pass string, e actors.PartitionEvent) {
	if e.Report.Outcome == passes.PartitionRetiring {
		return
	}
	m.partitions.WithLabelValues(pass, string(e.Report.Outcome)).Inc()
	if e.Report.Outcome == passes.PartitionRetired && e.Report.EstimatedRows > 0 {
		m.partitionRows.WithLabelValues(pass).Add(e.Report.EstimatedRows)
	}
}
