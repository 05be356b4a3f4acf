//go:build multinode

package multinode

import (
	"testing"
	"time"

	"github.com/retentionkit/retention/multinode/harness"
)

// TestDrainHelpersOneMillion drains one 1,000,000-row backlog on three members with
// drain_helpers: 2. The helpers (pass#1, pass#2) must take part: the table's batches
// run under more than one identity's lock and from more than one member; each batch
// holds its identity's lock and a slot; the ledger's rows over the pass and its
// helpers equal the rows the table lost (no row counted by two batches); and the
// keep-set is exact.
func TestDrainHelpersOneMillion(t *testing.T) {
	s := newScenario(t, []harness.Table{{Name: "million", Rows: rowsFor(1_000_000)}},
		harness.ClusterOptions{MaxConcurrentDeletes: 3, NodeMaxConcurrentDeletes: 3, DrainHelpers: 2},
		harness.PassOptions{BatchSize: 2000, MaxBatchesPerSweep: 20, SweepInterval: time.Second})
	began := time.Now()
	s.start(3)
	s.drained(guard)
	report("drain helpers", "1,000,000 expired rows, three members, drain_helpers 2", time.Since(began))
	s.stopAll()
	gone := s.checkKeep()
	if gone < 1_000_000 {
		t.Errorf("%d rows deleted, want at least 1,000,000", gone)
	}
	s.checkLedgerCounts()
	locks := s.checkLocks(3, 3)
	if locks.PassKeys["million"] < 2 {
		t.Errorf("the batches ran under %d identity lock(s): the drain helpers took no part", locks.PassKeys["million"])
	}
	if len(locks.Apps["million"]) < 2 {
		t.Errorf("the batches came from %d member session(s) %v: the helpers ran on no other member", len(locks.Apps["million"]), locks.Apps["million"])
	}
	t.Logf("%d batches under %d identity locks from %v", locks.Batches, locks.PassKeys["million"], locks.Apps["million"])
}
