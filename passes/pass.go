package passes

import (
	"context"
	"time"
)

// Pass deletes expired rows, one bounded batch at a time.
//
// PurgeBatch deletes at most batchSize rows older than olderThan and returns how many it
// took. Returning exactly batchSize tells the runtime that more may be waiting, so the
// next batch follows (after the pass's BatchDelay); anything less ends the sweep until the
// next interval. The runtime computes olderThan once per sweep, so a pass never reads the
// clock, and a long drain deletes the set it set out to delete instead of chasing a
// cutoff that moves under it.
//
// A batch should be one transaction, and PurgeBatch must honour ctx: the runtime cancels
// it when the batch times out or the runtime stops past its grace period. Rows the pass
// had to leave in place are reported with ReportSkipped and count toward a full batch;
// ReportMoreWaiting keeps a sweep going after a batch that was short for another reason.
// A count below zero, or one that with the skipped rows exceeds batchSize, is a bug in
// the pass and fails the sweep deterministically.
type Pass interface {
	PurgeBatch(ctx context.Context, batchSize int, olderThan time.Time) (int, error)
}

// PassFunc adapts a function to a Pass.
type PassFunc func(ctx context.Context, batchSize int, olderThan time.Time) (int, error)

// PurgeBatch calls f.
func (f PassFunc) PurgeBatch(ctx context.Context, batchSize int, olderThan time.Time) (int, error) {
	return f(ctx, batchSize, olderThan)
}

// Closer is implemented by a pass that holds something for the length of a sweep (a
// connection, a transaction); the runtime calls Close once the sweep ends, however it
// ended.
type Closer interface {
	Close() error
}

// Factory builds the pass for one sweep. The runtime calls it afresh at the start of
// every sweep, off the actor's mailbox, so a pass may hold a connection or other per-sweep
// state without leaking it from one sweep into the next. A factory error fails the sweep.
type Factory func(ctx context.Context) (Pass, error)

// Reuse returns a Factory that hands out the same pass every sweep, for a pass that holds
// no per-sweep state.
func Reuse(p Pass) Factory {
	return func(context.Context) (Pass, error) { return p, nil }
}
