package passes

import (
	"context"
	"fmt"
	"regexp"
	"time"
)

// PartitionOutcome says what a sweep's retire phase did with one partition.
type PartitionOutcome string

// The partition outcomes.
const (
	// PartitionRetiring: the partition is detached from the table and is about to be
	// dropped, moved or left (its mode); reported before that statement runs, so a
	// record of what goes exists before it is gone.
	PartitionRetiring PartitionOutcome = "retiring"
	// PartitionRetired: the partition was dropped, archived or left detached.
	PartitionRetired PartitionOutcome = "retired"
	// PartitionContended: a statement on the partition gave up at its lock timeout (or
	// lost a deadlock); the retire phase stops for the sweep and the row path deletes
	// the same rows. Not a failure.
	PartitionContended PartitionOutcome = "contended"
	// PartitionKept: the partition is expired but left to the row path this sweep (a
	// quarantined key in it, a reference the detach refused).
	PartitionKept PartitionOutcome = "kept"
	// PartitionGone: the partition, listed as expired, is no longer one of the table's:
	// another sweep of the table (a drain helper, maybe on another member) retired it
	// meanwhile. Not a failure, and not counted as retired here.
	PartitionGone PartitionOutcome = "gone"
)

// PartitionReport is one partition's outcome in a retire phase: a kind of batch report
// whose row count is the planner's estimate, named as one, since a retired partition's
// rows are never counted one by one.
type PartitionReport struct {
	// Partition is the partition's table, schema-qualified.
	Partition string
	// Lower and Upper are its bounds as the catalog writes them (Upper is exclusive).
	Lower, Upper string
	// EstimatedRows is the planner's estimate of its rows (reltuples), not a count; -1
	// when the partition was never analyzed.
	EstimatedRows float64
	// Mode is what retiring does with it: drop, detach or archive.
	Mode PartitionMode
	// Cutoff is the sweep's cutoff, which the upper bound is at or below.
	Cutoff time.Time
	// Outcome is what happened.
	Outcome PartitionOutcome
	// Reason says why a partition was contended or kept; nil otherwise.
	Reason error
	// Left counts, for a contended or kept outcome, the wholly expired partitions it
	// leaves attached to the table for this sweep: 1 for a kept expired one; for a
	// contended one, every expired partition the retire phase had still to do, this
	// one included (the phase stops there); for a kept partition someone else's
	// pending detach holds (not expired itself), the expired ones behind it. 0 for the
	// other outcomes.
	Left int
}

// Warns reports whether an operator should hear of r as a warning: a partition left
// attached (contended, kept), or one retired whose outcome the partition journal could
// not record (its entry stays retiring, and Reason says so).
func (r PartitionReport) Warns() bool {
	return r.Outcome == PartitionContended || r.Outcome == PartitionKept || (r.Outcome == PartitionRetired && r.Reason != nil)
}

// String is the report as a log line reads it.
func (r PartitionReport) String() string {
	// A partition never analyzed has no estimate (PostgreSQL's reltuples is -1); "-1
	// rows" would read as a count gone wrong, so say unknown, as retention status does.
	rows := fmt.Sprintf("%.0f (an estimate, not a count)", r.EstimatedRows)
	if r.EstimatedRows < 0 {
		rows = "unknown (the partition was never analyzed)"
	}
	s := fmt.Sprintf("partition %s [%s, %s) %s: estimated rows %s, mode %s, cutoff %s",
		r.Partition, r.Lower, r.Upper, r.Outcome, rows, r.Mode, r.Cutoff.UTC().Format(time.RFC3339Nano))
	if r.Reason != nil {
		s += ": " + r.Reason.Error()
	}
	if r.Left > 0 {
		s += fmt.Sprintf("; %d expired %s left attached this sweep", r.Left, plural(r.Left, "partition", "partitions"))
	}
	return s
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// loggedOutcome matches the start of a report's String: the partition, its bounds and
// its outcome.
var loggedOutcome = regexp.MustCompile(`^partition \S+ \[.*\) (retiring|retired|contended|kept|gone): `)

// LoggedPartitionOutcome reads the outcome back from a log line String wrote (the
// ledger's log rows), for a reader such as `retention status` that finds the reason a
// sweep left expired partitions attached; ok is false for any other line.
func LoggedPartitionOutcome(line string) (PartitionOutcome, bool) {
	m := loggedOutcome.FindStringSubmatch(line)
	if m == nil {
		return "", false
	}
	return PartitionOutcome(m[1]), true
}

// PartitionReporter is a BatchReporter that also hears what a batch of the retire
// phase did with a partition.
type PartitionReporter interface {
	// Partition: the batch reached outcome with a partition.
	Partition(r PartitionReport)
}

// ReportPartition tells the runtime what the batch did with a partition. A reporter
// that is not a PartitionReporter hears nothing of it; the batch still says more is
// waiting (ReportMoreWaiting), as the rows were not counted.
func ReportPartition(ctx context.Context, r PartitionReport) {
	if p, ok := ctx.Value(batchReporterKey{}).(PartitionReporter); ok {
		p.Partition(r)
	}
}
