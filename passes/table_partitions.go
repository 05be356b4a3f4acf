package passes

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes/driver"
)

// The retire phase of a table pass with partitions: (PartitionSpec). Each sweep, at its
// one cutoff and before its row path, it retires the partitions whose upper bound the
// database finds at or below the cutoff in the timestamp column's own type: every row
// of such a partition is one the row path would delete (its timestamp is below an
// upper bound that is at or below the cutoff), and startup refused every pass for
// which a whole partition could hold a row the pass keeps. One partition is one unit
// of work, run as a batch of the sweep, so pacing, max_batches_per_sweep, delete slots
// and the cluster lock apply to it as to a batch; its rows are reported as the
// planner's estimate (PartitionReport), never as the batch's count.
//
// A unit, for the oldest partition left:
//  1. a partition left pending a detach (a timeout, a cancellation, a crash) is
//     finalized first;
//  2. a partition holding a quarantined key is left to the row path, which keeps that
//     row as a sweep without partitions would;
//  3. the rows of declared delete or set_null children under the partition's rows are
//     handled first, a batch of the partition's keys per unit, through the child path
//     of an ordinary batch;
//  4. with a PartitionJournal (the ledger's, on a node), the retirement is recorded
//     and committed; a failed write fails the batch with nothing detached;
//  5. the partition is detached (CONCURRENTLY unless the pass says not, on the sweep's
//     own connection outside a transaction, with lock_timeout), reported as retiring,
//     then dropped, moved to the archive schema or left, and the journal's entry gets
//     its outcome.
//
// A lock timeout or a lost deadlock ends the retire phase for the sweep (reported
// contended, not a failure): the row path then deletes the same rows, exactly, and the
// next sweep finalizes whatever was left pending. A detach refused by a foreign key (a
// reference added after the children were cleared) leaves that partition to the row
// path.

// retirePhase is the retire phase's state within one sweep.
type retirePhase struct {
	listed bool
	done   bool               // the row path's turn: nothing left, or contended
	queue  []driver.Partition // partitions still to retire, pending ones first, then oldest first
	held   [][]any            // quarantined keys: a partition holding one stays
	// unchecked: the quarantine holds keys the sweep cannot look for (past
	// maxExcluded, or not decodable), so every partition stays this sweep.
	unchecked bool
	// clearing is the key cursor of the partition whose children are being cleared;
	// cleared says they are.
	clearing *candidate
	cleared  bool
	// entry is the partition journal's entry for the partition being retired, until
	// its outcome is recorded; 0: none.
	entry int64
}

// retireNext runs one unit of the retire phase and reports whether it did: false means
// the phase is over for this sweep and the batch goes on to the row path.
func (s *tableSweep) retireNext(ctx context.Context, db bun.IDB, batchSize int, cut cutoff, at time.Time) (bool, error) {
	t := s.t
	if t.spec.Partitions == nil {
		return false, nil
	}
	if s.retire == nil {
		s.retire = &retirePhase{}
	}
	r := s.retire
	if r.done {
		return false, nil
	}
	stop := s.cancelOnDone(ctx)
	defer stop()
	if !r.listed {
		if err := s.listPartitions(ctx, db, cut); err != nil {
			return false, err
		}
	} else if err := s.relist(ctx, db, cut, at); err != nil {
		return false, err
	}
	for len(r.queue) > 0 {
		p := r.queue[0]
		report := t.partitionReport(p, at)
		if p.Pending && !p.Expired {
			// Someone else's detach of a partition that is not expired: never ours to
			// finish or drop, and PostgreSQL detaches no other partition of the table
			// concurrently meanwhile, so the expired ones behind it wait with it (the
			// report's Left counts them).
			s.keep(ctx, report, errors.New("a detach of this partition, which is not expired, was begun elsewhere and is pending; the retire phase waits for it to be finished"))
			s.retire.done = true
			return false, nil
		}
		if r.unchecked && !p.Pending {
			s.keep(ctx, report, fmt.Errorf("the quarantine holds keys this sweep cannot look for (more than %d, or unreadable); the row path keeps them", maxExcluded))
			continue
		}
		if !p.Pending {
			kept, err := s.holdsQuarantined(ctx, db, p)
			if err != nil {
				return false, fmt.Errorf("pass %q: partition %s: %w", t.name, report.Partition, err)
			}
			if kept {
				s.keep(ctx, report, errors.New("a quarantined row in it is not due for another attempt; the row path keeps it"))
				continue
			}
			if len(t.children) > 0 && !r.cleared {
				return true, s.clearChildren(ctx, db, batchSize, p, report)
			}
		}
		// The journal's entry is committed before the detach: if it cannot be, nothing
		// is detached and the batch fails, so no partition goes unrecorded.
		if err := s.journalRetiring(ctx, report); err != nil {
			return false, err
		}
		err := t.detach(ctx, db, p)
		if err != nil {
			return s.retireFailed(ctx, report, err)
		}
		report.Outcome = PartitionRetiring
		ReportPartition(ctx, report)
		spec := t.spec.Partitions
		err = t.drv.DisposeDetached(ctx, db, p, string(spec.mode()), spec.ArchiveSchema, spec.lockTimeout())
		if err != nil {
			// Detached already: the table holds none of its rows, whatever the drop did.
			err = fmt.Errorf("detached, but %s did not complete (it is left detached as %s): %w", spec.mode(), report.Partition, err)
			if jerr := s.journalSettle(ctx, RetirementDisposeFailed, err); jerr != nil {
				err = errors.Join(err, jerr)
			}
			return s.retireFailed(ctx, report, err)
		}
		r.queue, r.cleared, r.clearing = r.queue[1:], false, nil
		report.Outcome = PartitionRetired
		// The partition is gone whatever the journal says now: a failed write of the
		// outcome is reported, not a failed batch, and the entry stays retiring.
		report.Reason = s.journalSettle(ctx, RetirementDone, nil)
		ReportPartition(ctx, report)
		ReportMoreWaiting(ctx)
		return true, nil
	}
	r.done = true
	return false, nil
}

// listPartitions reads, once per sweep, the partitions to retire and the quarantined
// keys that keep one.
func (s *tableSweep) listPartitions(ctx context.Context, db bun.IDB, cut cutoff) error {
	t, r := s.t, s.retire
	r.listed = true
	parts, err := t.drv.ExpiredPartitions(ctx, db, t.spec.Table, cut.value)
	if err != nil {
		return fmt.Errorf("pass %q: list expired partitions: %w", t.name, err)
	}
	r.queue = parts
	if t.quarantine == nil || len(parts) == 0 {
		return nil
	}
	entries, err := t.quarantine.Quarantined(ctx, t.name)
	if err != nil {
		return fmt.Errorf("pass %q: quarantine: %w", t.name, err)
	}
	for _, e := range entries {
		key, ok := s.layout.decodeKey(e.Key, len(t.key))
		if !ok || len(r.held) >= maxExcluded {
			r.held, r.unchecked = nil, true
			return nil
		}
		r.held = append(r.held, key)
	}
	return nil
}

// relist reads the expired partitions again before a unit after the sweep's first: a
// partition of the queue no longer among them was retired by another sweep of the
// table meanwhile (a drain helper has a sweep lock of its own, maybe on another
// member), so it is reported gone and left out; one whose detach became pending is
// finished as pending. A listing is a catalog read, cheap beside the unit it guards.
func (s *tableSweep) relist(ctx context.Context, db bun.IDB, cut cutoff, at time.Time) error {
	t, r := s.t, s.retire
	if len(r.queue) == 0 {
		return nil
	}
	fresh, err := t.drv.ExpiredPartitions(ctx, db, t.spec.Table, cut.value)
	if err != nil {
		return fmt.Errorf("pass %q: list expired partitions: %w", t.name, err)
	}
	now := map[string]driver.Partition{}
	for _, p := range fresh {
		now[p.Schema+"."+p.Name] = p
	}
	queue := r.queue[:0]
	for i, p := range r.queue {
		f, ok := now[p.Schema+"."+p.Name]
		if !ok {
			if i == 0 {
				r.cleared, r.clearing = false, nil
			}
			s.gone(ctx, t.partitionReport(p, at), errors.New("it is no longer a partition of the table: another sweep of the table retired it"))
			continue
		}
		p.Pending = f.Pending
		queue = append(queue, p)
	}
	r.queue = queue
	return nil
}

// gone reports a partition of the queue another sweep retired; it is out of the queue.
func (s *tableSweep) gone(ctx context.Context, report PartitionReport, reason error) {
	report.Outcome, report.Reason = PartitionGone, reason
	ReportPartition(ctx, report)
}

// holdsQuarantined reports whether a quarantined key (due or not: a due one is tried
// again by the row path, whose outcome a retirement must not pre-empt) lies in p.
func (s *tableSweep) holdsQuarantined(ctx context.Context, db bun.IDB, p driver.Partition) (bool, error) {
	if len(s.retire.held) == 0 {
		return false, nil
	}
	return db.NewSelect().TableExpr("?.?", bun.Ident(p.Schema), bun.Ident(p.Name)).
		Where("? IN (?)", tuple("", s.t.key), keyList(s.retire.held)).Exists(ctx)
}

// keep leaves the first partition of the queue to the row path, and says so.
func (s *tableSweep) keep(ctx context.Context, report PartitionReport, reason error) {
	p := s.retire.queue[0]
	s.retire.queue, s.retire.cleared, s.retire.clearing = s.retire.queue[1:], false, nil
	report.Outcome, report.Reason, report.Left = PartitionKept, reason, 0
	switch {
	case p.Pending && !p.Expired:
		report.Left = expiredIn(s.retire.queue) // the retire phase ends here
	case p.Expired:
		report.Left = 1
	}
	ReportPartition(ctx, report)
}

// expiredIn counts the expired partitions in queue.
func expiredIn(queue []driver.Partition) int {
	n := 0
	for _, p := range queue {
		if p.Expired {
			n++
		}
	}
	return n
}

// retireFailed decides what a failed partition statement means: contended ends the
// retire phase for the sweep, a reference the detach refused leaves that partition to
// the row path, anything else fails the batch.
func (s *tableSweep) retireFailed(ctx context.Context, report PartitionReport, err error) (bool, error) {
	// settled records the outcome in the journal (a no-op when the entry's outcome is
	// recorded already, after a failed drop) and joins a failure to record it to the
	// cause, so the report says the entry stays retiring.
	settled := func(outcome RetirementOutcome) error {
		if jerr := s.journalSettle(ctx, outcome, err); jerr != nil {
			return errors.Join(err, jerr)
		}
		return err
	}
	switch {
	case errors.Is(err, driver.ErrPartitionGone) && ctx.Err() == nil:
		// Retired by another sweep between the listing and the statement.
		s.retire.queue, s.retire.cleared, s.retire.clearing = s.retire.queue[1:], false, nil
		s.gone(ctx, report, settled(RetirementGone))
		ReportMoreWaiting(ctx)
		return true, nil
	case errors.Is(err, driver.ErrPartitionContended):
		s.retire.done = true
		report.Outcome, report.Reason, report.Left = PartitionContended, settled(RetirementContended), expiredIn(s.retire.queue)
		ReportPartition(ctx, report)
		ReportMoreWaiting(ctx)
		return true, nil
	case IsRowSpecific(s.t.drv.Classify(err)) && ctx.Err() == nil:
		s.keep(ctx, report, settled(RetirementKept))
		ReportMoreWaiting(ctx)
		return true, nil
	}
	return false, fmt.Errorf("pass %q: retire partition %s: %w", s.t.name, report.Partition, settled(RetirementFailed))
}

// detach detaches p (or finalizes its pending detach).
func (t *Table) detach(ctx context.Context, db bun.IDB, p driver.Partition) error {
	spec := t.spec.Partitions
	how := driver.Detach{Concurrently: spec.concurrently(), Finalize: p.Pending, LockTimeout: spec.lockTimeout()}
	return t.drv.DetachPartition(ctx, db, t.spec.Table, p, how)
}

// clearChildren is step 3: one transaction that locks the partition's next batch of
// keys and handles their children the way a batch does, without deleting the keys.
func (s *tableSweep) clearChildren(ctx context.Context, db bun.IDB, batchSize int, p driver.Partition, report PartitionReport) error {
	t, r := s.t, s.retire
	var got []candidate
	err := TxUnitOfWork{DB: db}.Execute(ctx, func(ctx context.Context) error {
		tx := DB(ctx, db)
		q := tx.NewSelect().TableExpr("?.?", bun.Ident(p.Schema), bun.Ident(p.Name)).
			ColumnExpr("?, ?", columnList("", t.key), bun.Ident(t.spec.Timestamp))
		if r.clearing != nil {
			q = q.Where("? > (?)", tuple("", t.key), bun.List(r.clearing.key))
		}
		rows, err := q.OrderExpr("?", columnList("", t.key)).Limit(int64(batchSize)).For("UPDATE").Rows(ctx)
		if err != nil {
			return err
		}
		if got, err = scanCandidates(rows, s.layout); err != nil || len(got) == 0 {
			return err
		}
		for _, c := range t.children {
			if err := t.handleChild(ctx, tx, c, candidateKeys(got)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		if IsRowSpecific(t.drv.Classify(err)) && ctx.Err() == nil {
			s.keep(ctx, report, fmt.Errorf("clearing its children: %w", err))
			ReportMoreWaiting(ctx)
			return nil
		}
		return fmt.Errorf("pass %q: partition %s: children: %w", t.name, report.Partition, err)
	}
	if len(got) < batchSize {
		r.cleared = true
	} else {
		last := got[len(got)-1]
		r.clearing = &last
	}
	ReportMoreWaiting(ctx)
	return nil
}

// partitionReport is p's report at the sweep's cutoff, before its outcome.
func (t *Table) partitionReport(p driver.Partition, at time.Time) PartitionReport {
	return PartitionReport{Partition: p.Schema + "." + p.Name, Lower: p.Lower, Upper: p.Upper, EstimatedRows: p.EstimatedRows,
		Mode: t.spec.Partitions.mode(), Cutoff: at}
}

// dryRunPartitions counts, for a pass with partitions:, the partitions a sweep at cut
// would retire and the rows in them (all of them among the eligible rows, since every
// row of such a partition is expired). A pending partition is left out: its rows are
// not seen through the table, so they are not among the eligible rows either.
func (t *Table) dryRunPartitions(ctx context.Context, cut cutoff, res *DryRunResult) error {
	if t.spec.Partitions == nil {
		return nil
	}
	parts, err := t.drv.ExpiredPartitions(ctx, t.db, t.spec.Table, cut.value)
	if err != nil {
		return fmt.Errorf("list expired partitions: %w", err)
	}
	for _, p := range parts {
		if p.Pending || !p.Expired {
			continue
		}
		n, err := t.db.NewSelect().TableExpr("?.?", bun.Ident(p.Schema), bun.Ident(p.Name)).Count(ctx)
		if err != nil {
			return fmt.Errorf("count the rows of partition %s.%s: %w", p.Schema, p.Name, err)
		}
		res.Partitions++
		res.InPartitions += int64(n)
	}
	return nil
}

// ExpiredPartitions counts the partitions of a pass with partitions: that a sweep at at
// would find wholly expired and still attached (one left pending a detach included),
// for an operator to see what a contended retire phase left; ok is false for a pass
// without partitions:.
func (t *Table) ExpiredPartitions(ctx context.Context, at time.Time) (n int, ok bool, err error) {
	if t.spec.Partitions == nil {
		return 0, false, nil
	}
	lay, err := t.readLayout(ctx, t.db)
	if err != nil {
		return 0, true, fmt.Errorf("pass %q: expired partitions: %w", t.name, err)
	}
	parts, err := t.drv.ExpiredPartitions(ctx, t.db, t.spec.Table, t.cutoff(at, lay).value)
	if err != nil {
		return 0, true, fmt.Errorf("pass %q: expired partitions: %w", t.name, err)
	}
	return expiredIn(parts), true, nil
}
