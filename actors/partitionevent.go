package actors

import "github.com/retentionkit/retention/passes"

// PartitionEvent says what a batch of a sweep's retire phase did with a partition (see
// passes.PartitionReport): retiring (before the drop, so a record of what goes exists
// before it is gone), retired, contended (the row path deletes its rows instead) or
// kept for the row path. Its rows are the planner's estimate, named as one.
type PartitionEvent struct {
	Name   string
	Sweep  int64
	Report passes.PartitionReport
}

// PassName names the pass.
func (e PartitionEvent) PassName() string { return e.Name }
