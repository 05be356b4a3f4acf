package passes

import (
	"context"
	"fmt"
	"time"
)

// PartitionJournal keeps a durable record of every partition a table pass with
// partitions: retires, written before the partition is detached. The runtime's
// partition reports (ReportPartition) reach the ledger asynchronously, so a node killed
// between a drop and that write would leave no trace of what it dropped; a journal
// entry is written and committed first, and the detach waits for it. The ledger
// implements it; a pass without one (a library user with no ledger) retires as before,
// with only the reports.
type PartitionJournal interface {
	// Retiring records, before anything is detached, that pass is about to retire the
	// partition r names (its bounds, estimated rows, mode and the sweep's cutoff), and
	// returns the entry's id for Settle. An error means nothing was recorded: the pass
	// then detaches nothing.
	Retiring(ctx context.Context, pass string, r PartitionReport) (int64, error)
	// Settle records the outcome of the retirement entry id began. It may fail after
	// the partition is gone; the entry then stays RetirementStarted, which says what
	// was about to happen and that its end was not recorded.
	Settle(ctx context.Context, id int64, outcome RetirementOutcome, reason error) error
}

// RetirementOutcome is how a journaled retirement ended, as the journal stores it.
type RetirementOutcome string

// The retirement outcomes. They are the journal's own rather than PartitionOutcome's,
// because a journal entry can end in a state no report names: detached, with the drop
// or the move not done.
const (
	// RetirementStarted: the entry was written and nothing else is known (the node
	// stopped, or the outcome's write failed). The partition may be attached,
	// detached or gone; the catalog says which.
	RetirementStarted RetirementOutcome = "retiring"
	// RetirementDone: detached and then dropped, archived or left, as the mode says.
	RetirementDone RetirementOutcome = "retired"
	// RetirementDisposeFailed: detached (the table holds none of its rows), but the
	// drop or the move to the archive schema failed; the partition is left detached.
	RetirementDisposeFailed RetirementOutcome = "detached, dispose failed"
	// RetirementContended: the detach gave up at its lock timeout; the partition is
	// still attached and the row path deletes its rows.
	RetirementContended RetirementOutcome = "contended"
	// RetirementKept: the detach was refused for a reason of the partition's own (a
	// reference); it stays attached, left to the row path.
	RetirementKept RetirementOutcome = "kept"
	// RetirementGone: another sweep retired the partition first.
	RetirementGone RetirementOutcome = "gone"
	// RetirementFailed: the detach failed otherwise; the batch failed with its error.
	RetirementFailed RetirementOutcome = "failed"
)

// settleTimeout bounds the write of an outcome. It runs even when the sweep's context
// is done (the drop it records happened regardless), so it needs a bound of its own.
const settleTimeout = 10 * time.Second

// WithPartitionJournal returns a copy of the pass that records each partition it
// retires in j before detaching it (see PartitionJournal).
func (t *Table) WithPartitionJournal(j PartitionJournal) *Table {
	c := *t
	c.journal = j
	return &c
}

// journalRetiring writes the entry for the partition at the head of the queue, before
// its detach; without a journal it writes nothing.
func (s *tableSweep) journalRetiring(ctx context.Context, report PartitionReport) error {
	s.retire.entry = 0
	if s.t.journal == nil {
		return nil
	}
	id, err := s.t.journal.Retiring(ctx, s.t.name, report)
	if err != nil {
		return fmt.Errorf("pass %q: partition %s: the partition journal could not record the retirement, so nothing was detached: %w", s.t.name, report.Partition, err)
	}
	s.retire.entry = id
	return nil
}

// journalSettle records how the journaled retirement ended. A failure is returned for
// the caller to report; the entry stays RetirementStarted.
func (s *tableSweep) journalSettle(ctx context.Context, outcome RetirementOutcome, reason error) error {
	id := s.retire.entry
	if s.t.journal == nil || id == 0 {
		return nil
	}
	s.retire.entry = 0
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), settleTimeout)
	defer cancel()
	if err := s.t.journal.Settle(ctx, id, outcome, reason); err != nil {
		return fmt.Errorf("the partition journal's entry %d keeps outcome %q: recording %q failed: %w", id, RetirementStarted, outcome, err)
	}
	return nil
}
