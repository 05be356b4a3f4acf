//go:build multinode

package multinode

import (
	"testing"
	"time"

	"github.com/retentionkit/retention/multinode/harness"
)

// TestClusterWideLimit runs 20 passes on three members that would each allow four
// deletes at once, under a cluster-wide limit of two. Every DELETE sleeps 20 ms, so
// batches of different passes overlap unless the slots keep them apart. pg_locks and
// pg_stat_activity, sampled throughout, and the slots granted at every batch must
// never exceed two; every batch must hold a slot; the limit must be reached (else the
// sampling proves nothing); and the keep-set must be exact.
func TestClusterWideLimit(t *testing.T) { onDatabases(t, true, testClusterWideLimit) }

func testClusterWideLimit(t *testing.T) {
	const limit = 2
	s := newScenario(t, tables("limited", 20, func(int) int { return rowsFor(6_000) }, 0.02),
		harness.ClusterOptions{MaxConcurrentDeletes: limit, NodeMaxConcurrentDeletes: 4},
		harness.PassOptions{BatchSize: 300, MaxBatchesPerSweep: 5, SweepInterval: time.Second})
	sampler := harness.StartSampler(s.db, harness.DefaultLockClasses)
	defer sampler.Stop()
	began := time.Now()
	s.start(3)
	s.drained(guard)
	report("cluster-wide limit", "20 passes, 3 members, limit 2: all drained", time.Since(began))
	samples := sampler.Stop()
	s.stopAll()
	s.checkKeep()
	s.checkExclusive(nil)
	locks := s.checkLocks(limit, 1)
	s.checkSamples(samples, limit)
	if samples.MaxSlots < limit && locks.MaxSlots < limit {
		t.Errorf("the slots in use never reached the limit %d (sampled %d, at batches %d): the scenario did not load the pool", limit, samples.MaxSlots, locks.MaxSlots)
	}
	members := map[string]bool{}
	for _, apps := range locks.Apps {
		for _, app := range apps {
			members[app] = true
		}
	}
	if len(members) < 3 {
		t.Errorf("only %d members deleted: the limit was not shared by three", len(members))
	}
	t.Logf("%d batches; samples %+v; most slots at a batch %d", locks.Batches, samples, locks.MaxSlots)
}
