package passes

import (
	"context"
	"errors"
)

// BatchReporter hears, during one PurgeBatch, what the count it returns cannot say. The
// runtime puts one in every batch's context; a pass reaches it through ReportSkipped and
// ReportMoreWaiting.
type BatchReporter interface {
	// RowSkipped: a row the pass could not delete and left in place for the rest of the
	// sweep (a row a foreign key still holds, say).
	RowSkipped(key any, err error)
	// MoreWaiting: the batch deleted fewer than batchSize rows, yet more rows may be
	// waiting (another sweeper took some of the batch, say), so the sweep should go on.
	MoreWaiting()
}

type batchReporterKey struct{}

// WithBatchReporter returns a context that carries r to the pass it is handed to.
func WithBatchReporter(ctx context.Context, r BatchReporter) context.Context {
	return context.WithValue(ctx, batchReporterKey{}, r)
}

// ReportSkipped tells the runtime that the row with key was skipped because of err. A
// skipped row counts toward the batch being full, so it never ends a sweep early. Without
// a reporter in ctx it does nothing.
func ReportSkipped(ctx context.Context, key any, err error) {
	if r, ok := ctx.Value(batchReporterKey{}).(BatchReporter); ok {
		r.RowSkipped(key, err)
	}
}

// ReportMoreWaiting tells the runtime that the batch was short for a reason other than
// running out of expired rows, so the sweep should not end. Without a reporter in ctx it
// does nothing.
func ReportMoreWaiting(ctx context.Context) {
	if r, ok := ctx.Value(batchReporterKey{}).(BatchReporter); ok {
		r.MoreWaiting()
	}
}

// HeldReporter is a BatchReporter that also hears of rows left in place without a
// report of their own: rows already in the pass's quarantine, set aside again this
// sweep. The runtime counts them toward a full batch and into the sweep's summary of
// held rows (by cause), so a batch of them neither ends a sweep early nor reads as
// contention.
type HeldReporter interface {
	// RowHeld: the row with key stays in place because of err (a *RowError, or
	// ErrQuarantined for a row set aside without a new attempt).
	RowHeld(key any, err error)
}

// ErrQuarantined is the cause of a row a sweep set aside without trying it again: it
// is in the pass's quarantine and its next attempt is not due.
var ErrQuarantined = errors.New("in quarantine, next attempt not due")

// ReportHeld tells the runtime that the row with key stays in place because of err
// without a report of its own. A reporter that is not a HeldReporter hears
// MoreWaiting instead, so the batch that held the row is not taken for the last one.
func ReportHeld(ctx context.Context, key any, err error) {
	switch r := ctx.Value(batchReporterKey{}).(type) {
	case HeldReporter:
		r.RowHeld(key, err)
	case BatchReporter:
		r.MoreWaiting()
	}
}

// LeftOutReporter is a BatchReporter that also hears of rows a sweep leaves out of its
// selects because they are held (rows in quarantine whose next attempt is not due): not
// part of any batch, but part of the sweep's summary of held rows and of why it ends.
type LeftOutReporter interface {
	// RowsLeftOut: n rows stay in place, left out of the sweep's selects, because of err.
	RowsLeftOut(n int, err error)
}

// ReportLeftOut tells the runtime that the sweep leaves n held rows out of its selects.
// Without a LeftOutReporter in ctx it does nothing: the rows are in no batch's count.
func ReportLeftOut(ctx context.Context, n int, err error) {
	if r, ok := ctx.Value(batchReporterKey{}).(LeftOutReporter); ok && n > 0 {
		r.RowsLeftOut(n, err)
	}
}
