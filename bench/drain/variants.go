package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/bench/internal/onesweep"
	"github.com/retentionkit/retention/passes"
)

func auditTable(db *bun.DB, format passes.TimestampFormat) (*passes.Table, error) {
	return passes.NewTable(db, "audit-log", passes.TableSpec{Table: "audit_log", Key: "id", Timestamp: "occurred_at", TimestampFormat: format})
}

// drainWithRuntime runs one sweep of the table pass on a Runtime on the wall clock,
// timed from SweepStarted to SweepDone (see onesweep.Run). The runtime computes the
// cutoff from its clock, which reads the cutoff plus the pass's retention.
func drainWithRuntime(batch int) func(context.Context, *bun.DB, time.Time) (int64, time.Duration, error) {
	return func(ctx context.Context, db *bun.DB, cutoff time.Time) (int64, time.Duration, error) {
		tbl, err := auditTable(db, passes.TimestampNative)
		if err != nil {
			return 0, 0, err
		}
		r, err := onesweep.Run(ctx, tbl, batch, cutoff, 0)
		return r.Rows, r.Elapsed, err
	}
}

// drainPlainLoopDurable is drainPlainLoop with every commit waiting for its WAL flush
// (synchronous_commit = on, the server's default), beside the pass's default off.
func drainPlainLoopDurable(batch int) func(context.Context, *bun.DB, time.Time) (int64, time.Duration, error) {
	return func(ctx context.Context, db *bun.DB, cutoff time.Time) (int64, time.Duration, error) {
		tbl, err := passes.NewTable(db, "audit-log", passes.TableSpec{Table: "audit_log", Key: "id", Timestamp: "occurred_at", SynchronousCommit: "on"})
		if err != nil {
			return 0, 0, err
		}
		return plainLoop(ctx, tbl, batch, cutoff)
	}
}

// drainPlainLoop calls the same pass in a loop, without the runtime.
func drainPlainLoop(batch int) func(context.Context, *bun.DB, time.Time) (int64, time.Duration, error) {
	return func(ctx context.Context, db *bun.DB, cutoff time.Time) (int64, time.Duration, error) {
		tbl, err := auditTable(db, passes.TimestampNative)
		if err != nil {
			return 0, 0, err
		}
		return plainLoop(ctx, tbl, batch, cutoff)
	}
}

// plainLoop runs one sweep of the pass the way the runtime does, minus the runtime: it
// builds the pass and calls PurgeBatch until a short batch. It is timed up to the last
// batch, as the runtime's SweepDone is; the pass is closed after that (which gives its
// connection back and, after a big sweep, runs the ANALYZE the runtime also runs after
// SweepDone, off the clock).
func plainLoop(ctx context.Context, tbl *passes.Table, batch int, cutoff time.Time) (int64, time.Duration, error) {
	start := time.Now()
	p, err := tbl.Factory()(ctx)
	if err != nil {
		return 0, 0, err
	}
	total, err := purgeAll(ctx, p, batch, cutoff)
	took := time.Since(start)
	if c, ok := p.(passes.Closer); ok {
		err = errors.Join(err, c.Close())
	}
	return total, took, err
}

func purgeAll(ctx context.Context, p passes.Pass, batch int, cutoff time.Time) (int64, error) {
	var total int64
	for {
		n, err := p.PurgeBatch(ctx, batch, cutoff)
		if err != nil {
			return total, err
		}
		total += int64(n)
		if n < batch {
			return total, nil
		}
	}
}

// drainReselect selects the oldest expired ids from the start of the index every batch,
// then deletes them: the shape the seed describes.
func drainReselect(batch int) func(context.Context, *bun.DB, time.Time) (int64, time.Duration, error) {
	return func(ctx context.Context, db *bun.DB, cutoff time.Time) (int64, time.Duration, error) {
		return timed(func() (int64, error) { return reselect(ctx, db, batch, cutoff) })
	}
}

func reselect(ctx context.Context, db *bun.DB, batch int, cutoff time.Time) (int64, error) {
	var total int64
	for {
		var ids []int64
		if err := db.NewRaw("SELECT id FROM audit_log WHERE occurred_at < ? ORDER BY occurred_at, id LIMIT ?", cutoff, batch).Scan(ctx, &ids); err != nil {
			return total, err
		}
		if len(ids) == 0 {
			return total, nil
		}
		res, err := db.NewDelete().TableExpr("audit_log").Where("id IN (?)", bun.List(ids)).Exec(ctx)
		if err != nil {
			return total, err
		}
		n, _ := res.RowsAffected()
		total += n
	}
}

// drainSingleStatement deletes each batch with one statement and a subquery.
func drainSingleStatement(batch int) func(context.Context, *bun.DB, time.Time) (int64, time.Duration, error) {
	return func(ctx context.Context, db *bun.DB, cutoff time.Time) (int64, time.Duration, error) {
		return timed(func() (int64, error) { return singleStatement(ctx, db, batch, cutoff) })
	}
}

func singleStatement(ctx context.Context, db *bun.DB, batch int, cutoff time.Time) (int64, error) {
	var total int64
	for {
		res, err := db.ExecContext(ctx, "DELETE FROM audit_log WHERE id IN (SELECT id FROM audit_log WHERE occurred_at < ? ORDER BY occurred_at, id LIMIT ?)", cutoff, batch)
		if err != nil {
			return total, err
		}
		n, _ := res.RowsAffected()
		total += n
		if n < int64(batch) {
			return total, nil
		}
	}
}

func drainUnbounded(ctx context.Context, db *bun.DB, cutoff time.Time) (int64, time.Duration, error) {
	return timed(func() (int64, error) {
		res, err := db.ExecContext(ctx, "DELETE FROM audit_log WHERE occurred_at < ?", cutoff)
		if err != nil {
			return 0, fmt.Errorf("unbounded delete: %w", err)
		}
		return res.RowsAffected()
	})
}

// timed runs f and reports how long it took.
func timed(f func() (int64, error)) (int64, time.Duration, error) {
	start := time.Now()
	n, err := f()
	return n, time.Since(start), err
}
