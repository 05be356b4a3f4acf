//go:build chaos

package chaos

import (
	"context"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/core/pacing"
	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/dbtest/pgcluster"
)

// startReplica makes a streaming replica of c (pgcluster.CreateReplica) and returns once
// c sees it streaming.
func startReplica(t *testing.T, c *cluster) *cluster {
	t.Helper()
	// A standby refuses to start with a lower max_connections (and the like) than its
	// primary: it gets the suite's settings too.
	replica, err := pgcluster.CreateReplica(context.Background(), c.Cluster, clusterOptions)
	if err != nil {
		t.Fatal(err)
	}
	r := &cluster{replica}
	t.Cleanup(r.Drop)
	primary := open(t, c.testDSN("postgres"))
	defer primary.Close()
	waitUntilWithin(t, time.Minute, "the replica streaming", func() bool {
		var n int
		err := primary.QueryRow("SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'").Scan(&n)
		return err == nil && n > 0
	})
	return r
}

// paceLog keeps an adaptive pass's PaceChanged events.
type paceLog struct {
	mu      sync.Mutex
	changes []actors.PaceChanged
	failed  []error
}

func (p *paceLog) Observe(e actors.Event) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch e := e.(type) {
	case actors.PaceChanged:
		p.changes = append(p.changes, e)
	case actors.PassFailed:
		p.failed = append(p.failed, e.Err)
	}
	return nil
}

func (p *paceLog) count(r pacing.Reason) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.failed) > 0 {
		panic(fmt.Sprintf("the pass failed: %v", p.failed))
	}
	n := 0
	for _, c := range p.changes {
		if c.Reason == r {
			n++
		}
	}
	return n
}

// TestAdaptivePacingHoldsBackForALaggingReplica drains a table under adaptive pacing
// while a streaming replica is attached. With the replica's replay paused, its replay
// lag grows past max_replica_lag: the pass backs off for replica lag. Replay resumed,
// the lag falls and the pass recovers on its own and goes on deleting.
func TestAdaptivePacingHoldsBackForALaggingReplica(t *testing.T) {
	replica := startReplica(t, the.pg)
	name := the.pg.createDatabase(t)
	ctx := context.Background()
	db, err := passes.Open(ctx, passes.DriverPostgres, the.pg.testDSN(name))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	expired := time.Now().Add(-48 * time.Hour).Unix()
	for _, q := range []string{
		"CREATE TABLE events (id bigint PRIMARY KEY, at bigint NOT NULL)",
		"CREATE INDEX events_at ON events (at, id)",
		fmt.Sprintf("INSERT INTO events SELECT g, %d FROM generate_series(1, 3000000) g", expired),
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	standby := open(t, replica.testDSN("postgres"))
	defer standby.Close()
	if _, err := standby.Exec("SELECT pg_wal_replay_pause()"); err != nil {
		t.Fatal(err)
	}
	tbl, err := passes.NewTable(db, "events", passes.TableSpec{Table: "events", Key: "id", Timestamp: "at", TimestampFormat: passes.TimestampUnixSeconds})
	if err != nil {
		t.Fatal(err)
	}
	opts := passes.DefaultOptions()
	opts.RetentionPeriod, opts.MaxStartupStagger, opts.MaxBatchesPerSweep = passes.Retain(time.Hour), 0, passes.Unbounded
	opts.Pacing, opts.MaxReplicaLag = passes.PacingAdaptive, 300*time.Millisecond
	quiet := logrus.New()
	quiet.SetOutput(io.Discard)
	log := &paceLog{}
	rt := actors.New(actors.Config{Logger: quiet, Observers: []actors.Observer{log}})
	if err := rt.Register(tbl.Registration(opts)); err != nil {
		t.Fatal(err)
	}
	if err := rt.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer rt.Stop(ctx)
	waitUntilWithin(t, time.Minute, "a back-off for replica lag while replay is paused", func() bool { return log.count(pacing.ReasonReplicaLag) > 0 })
	if _, err := standby.Exec("SELECT pg_wal_replay_resume()"); err != nil {
		t.Fatal(err)
	}
	waitUntilWithin(t, time.Minute, "recovery once replay resumed", func() bool { return log.count(pacing.ReasonRecovered) > 0 })
	log.mu.Lock()
	var lagged actors.PaceChanged
	for _, c := range log.changes {
		if c.Reason == pacing.ReasonReplicaLag {
			lagged = c
			break
		}
	}
	log.mu.Unlock()
	if lagged.ReplicaLag <= opts.MaxReplicaLag {
		t.Errorf("back-off %+v: want the lag it saw over %v", lagged, opts.MaxReplicaLag)
	}
	if st := rt.Status().Passes[0]; st.TotalRows == 0 || st.Pace == nil || st.Pace.Cuts == 0 {
		t.Errorf("status %+v (pace %+v): want rows deleted and back-offs", st, st.Pace)
	}
}
