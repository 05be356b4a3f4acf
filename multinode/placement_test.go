//go:build multinode

package multinode

import (
	"testing"
	"time"

	"github.com/retentionkit/retention/multinode/harness"
)

// TestEveryPassOnExactlyOneMember drains six large backlogs (100k to 300k expired rows
// each, with fresh rows and rows the filter excludes among them) on three members over
// many sweeps. Every pass must have one owner that all members agree on; no two
// sessions may delete from one table at once, nor two ledger runs of one pass overlap;
// every batch must run under its pass's advisory lock (one key per pass, whichever
// member runs it) and a cluster-wide slot; pg_locks must never show a key granted
// twice; and the keep-set must be exact at the end.
func TestEveryPassOnExactlyOneMember(t *testing.T) {
	onDatabases(t, true, testEveryPassOnExactlyOneMember)
}

func testEveryPassOnExactlyOneMember(t *testing.T) {
	expired := []int{100_000, 140_000, 180_000, 220_000, 260_000, 300_000}
	s := newScenario(t, tables("backlog", 6, func(i int) int { return rowsFor(expired[i-1]) }, 0),
		harness.ClusterOptions{MaxConcurrentDeletes: 3, NodeMaxConcurrentDeletes: 3},
		harness.PassOptions{BatchSize: 2000, MaxBatchesPerSweep: 25, SweepInterval: time.Second})
	sampler := harness.StartSampler(s.db, harness.DefaultLockClasses)
	defer sampler.Stop()
	began := time.Now()
	s.start(3)
	s.eventually(guard, "one owner per pass that every member agrees on", func() (bool, error) {
		_, err := s.fleet.Owners(s.ctx, s.names())
		return err == nil, err
	})
	s.drained(guard)
	report("every pass on one member", "six backlogs (1.2M expired rows) drained by three members", time.Since(began))
	samples := sampler.Stop()
	s.stopAll()

	s.checkKeep()
	s.checkLedgerCounts()
	s.checkExclusive(nil)
	locks := s.checkLocks(3, 1)
	s.checkSamples(samples, 3)
	members := map[string]bool{}
	for _, apps := range locks.Apps {
		for _, app := range apps {
			members[app] = true
		}
	}
	if len(members) < 2 {
		t.Errorf("only %d member(s) deleted (%v): the passes were not spread", len(members), locks.Apps)
	}
	t.Logf("%d batches; sessions per table %v; samples: %+v", locks.Batches, locks.Apps, samples)
}

// rowsFor is how many fixture rows hold about expired rows the rule deletes (nine in
// ten are old, six in seven of those are done).
func rowsFor(expired int) int { return expired * 70 / 54 }
