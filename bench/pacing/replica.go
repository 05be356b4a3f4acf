package main

import (
	"context"
	"time"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/core/pacing"
)

// replicaResult is one drain with a streaming replica attached.
type replicaResult struct {
	v              variant
	rows           int
	elapsed        time.Duration
	lags           []float64 // replay lag samples, seconds
	maxLag, p99Lag float64
	backoffs       int // PaceChanged for replica lag
}

// runReplica drains for c.replicaDrain with the replica streaming and samples the
// primary's view of its replay lag every 250 ms.
func runReplica(ctx context.Context, c config, db *bun.DB, v variant) (replicaResult, error) {
	res := replicaResult{v: v}
	// A longer drain: twice the backlog, built (and vacuumed and checkpointed) before
	// the clock starts, so no bulk load's aftermath falls into the measurement.
	if err := createTable(ctx, db, 2*c.rows); err != nil {
		return res, err
	}
	d, err := startDrain(ctx, db, v)
	if err != nil {
		return res, err
	}
	defer d.stop()
	ld, err := startLoad(ctx, c.loadDSN, c.rate, c.accounts, time.Hour)
	if err != nil {
		return res, err
	}
	defer ld.cmd.Process.Kill()
	time.Sleep(3 * time.Second)
	start := time.Now()
	d.pool.set(true)
	for time.Since(start) < c.replicaDrain {
		var secs float64
		err := db.QueryRowContext(ctx, `SELECT coalesce(max(extract(epoch FROM replay_lag)), 0)::float8 FROM pg_stat_replication`).Scan(&secs)
		if err == nil {
			res.lags = append(res.lags, secs)
		}
		time.Sleep(250 * time.Millisecond)
	}
	d.pool.set(false)
	res.elapsed = time.Since(start)
	res.rows = d.rowsIn(start, time.Now().Add(time.Second))
	res.maxLag, res.p99Lag = quantile(res.lags, 1), quantile(res.lags, 0.99)
	res.backoffs = d.reasons()[pacing.ReasonReplicaLag]
	_ = ld.cmd.Process.Signal(interrupt)
	_, _ = ld.wait()
	return res, d.err()
}
