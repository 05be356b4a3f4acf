package main

import (
	"context"
	"fmt"
	"time"

	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/dbtest/pgcluster"
)

// The benchmark's PostgreSQL clusters (passes/dbtest/pgcluster), so the measurement
// has a server of its own in Debian's default configuration instead of one other work
// shares. A replica must allow at least its primary's max_connections, so both get it.
var (
	primaryOptions = pgcluster.Options{Prefix: "pacebench", Settings: []string{"max_connections=100"}}
	replicaOptions = pgcluster.Options{Prefix: "pacebench_replica", Settings: []string{"max_connections=100"}}
)

// createReplica makes a streaming replica of primary and returns once the primary sees
// it streaming.
func createReplica(ctx context.Context, primary *pgcluster.Cluster) (*pgcluster.Cluster, error) {
	r, err := pgcluster.CreateReplica(ctx, primary, replicaOptions)
	if err != nil {
		return nil, err
	}
	db, err := passes.Open(ctx, passes.DriverPostgres, primary.DSN("postgres"))
	if err != nil {
		r.Drop()
		return nil, err
	}
	defer db.Close()
	deadline := time.Now().Add(time.Minute)
	for {
		var n int
		if err := db.QueryRowContext(ctx, "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'").Scan(&n); err == nil && n > 0 {
			return r, nil
		}
		if time.Now().After(deadline) {
			r.Drop()
			return nil, fmt.Errorf("replica %s never started streaming", r.Name)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
