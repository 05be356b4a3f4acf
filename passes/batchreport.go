package passes

import "context"

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
