package passes

import "context"

// SkipReporter hears of a row a pass could not delete and left in place for the rest of
// the sweep (a row a foreign key still holds, say), so the runtime can publish it.
type SkipReporter func(key any, err error)

type skipReporterKey struct{}

// WithSkipReporter returns a context that carries r to the passes it is handed to. The
// runtime sets it on every batch's context.
func WithSkipReporter(ctx context.Context, r SkipReporter) context.Context {
	return context.WithValue(ctx, skipReporterKey{}, r)
}

// ReportSkipped tells the runtime, through ctx, that the row with key was skipped
// because of err. Without a reporter in ctx it does nothing.
func ReportSkipped(ctx context.Context, key any, err error) {
	if r, ok := ctx.Value(skipReporterKey{}).(SkipReporter); ok && r != nil {
		r(key, err)
	}
}
