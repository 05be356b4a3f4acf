package actors

import (
	"errors"
	"testing"

	"github.com/retentionkit/retention/passes"
)

// A sweep's expired partitions left add up over its batches, and the reason shown is
// the contended report's whenever there is one, kept ones' otherwise; reports that
// leave nothing count for nothing.
func TestPartitionsLeftAddUp(t *testing.T) {
	t.Parallel()
	var first, second, sweep partitionsLeft
	first.add(passes.PartitionReport{Outcome: passes.PartitionRetired})
	first.add(passes.PartitionReport{Outcome: passes.PartitionKept, Left: 1, Reason: errors.New("a quarantined row")})
	second.add(passes.PartitionReport{Outcome: passes.PartitionContended, Left: 3, Reason: errors.New("lock timeout")})
	sweep.merge(first)
	sweep.merge(second)
	if sweep.n != 4 || sweep.reason != "contended: lock timeout" {
		t.Fatalf("left %+v; want 4, contended: lock timeout", sweep)
	}
	var kept partitionsLeft
	kept.merge(first)
	kept.merge(partitionsLeft{})
	if kept.n != 1 || kept.reason != "kept: a quarantined row" {
		t.Fatalf("left %+v; want 1, kept: a quarantined row", kept)
	}
}
