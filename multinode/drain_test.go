//go:build multinode

package multinode

import (
	"fmt"
	"testing"
	"time"

	"github.com/retentionkit/retention/multinode/harness"
)

// TestDrainHelpersOneMillion drains one 1,000,000-row backlog on three members with
// drain_helpers: 2. The helpers (million#1, million#2) must take part: the table's
// batches run under more than one identity's lock; each identity's batches come from
// the member /cluster places it on (protoactor's rendezvous hash, so a helper may share
// its pass's member); each batch holds its identity's lock and a slot; the ledger's rows
// over the pass and its helpers equal the rows the table lost (no row counted by two
// batches); and the keep-set is exact.
func TestDrainHelpersOneMillion(t *testing.T) {
	const pass = "million"
	s := newScenario(t, []harness.Table{{Name: pass, Rows: rowsFor(1_000_000)}},
		harness.ClusterOptions{MaxConcurrentDeletes: 3, NodeMaxConcurrentDeletes: 3, DrainHelpers: 2},
		harness.PassOptions{BatchSize: 2000, MaxBatchesPerSweep: 20, SweepInterval: time.Second})
	began := time.Now()
	s.start(3)
	owners := map[string]string{}
	s.eventually(guard, "/cluster placing the pass and its two helpers", func() (bool, error) {
		v, err := s.fleet.Running()[0].Cluster(s.ctx)
		if err != nil {
			return false, err
		}
		for _, p := range v.Passes {
			if p.Name != pass {
				continue
			}
			owners[p.Name] = p.Owner
			for _, h := range p.Helpers {
				owners[h.Name] = h.Owner
			}
		}
		return len(owners) == 3 && owners[pass+"#1"] != "" && owners[pass+"#2"] != "", nil
	})
	s.drained(guard)
	took := time.Since(began)
	s.stopAll()
	gone := s.checkKeep()
	if gone < 1_000_000 {
		t.Errorf("%d rows deleted, want at least 1,000,000", gone)
	}
	s.checkLedgerCounts()
	locks := s.checkLocks(3, 3)
	if locks.PassKeys[pass] < 2 {
		t.Errorf("the batches ran under %d identity lock(s): the drain helpers took no part", locks.PassKeys[pass])
	}
	ids := []string{pass, pass + "#1", pass + "#2"}
	apps, err := s.db.IdentityApps(s.ctx, harness.DefaultLockClasses, pass, ids)
	if err != nil {
		t.Fatal(err)
	}
	members := map[string]bool{}
	for _, id := range ids {
		for _, app := range apps[id] {
			members[app] = true
			if app != harness.AppName(owners[id]) {
				t.Errorf("%s's batches came from %s, but /cluster placed it on member %s", id, app, owners[id])
			}
		}
	}
	report("drain helpers", fmt.Sprintf("1,000,000 expired rows, three members, drain_helpers 2 (identities on %d member(s))", len(members)), took)
	t.Logf("%d batches; per identity %v; placed %v", locks.Batches, apps, owners)
}
