//go:build multinode

package multinode

import (
	"fmt"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/retentionkit/retention/multinode/harness"
)

// failoverTables are six backlogs that take a while to drain (a pause between
// batches), so a fault lands mid-drain.
func failoverTables() []harness.Table {
	return tables("moving", 6, func(int) int { return rowsFor(40_000) }, 0)
}

var failoverPasses = harness.PassOptions{BatchSize: 500, BatchDelay: 100 * time.Millisecond, MaxBatchesPerSweep: 40, SweepInterval: time.Second}

// failoverCluster gives every pass a slot, so a moved pass's next batch waits for its
// new owner, not for a slot.
var failoverCluster = harness.ClusterOptions{MaxConcurrentDeletes: 6, NodeMaxConcurrentDeletes: 6}

// TestKill9MidDrain kills the member running the most passes with SIGKILL while every
// pass drains. Each of its passes must run again on a survivor (the time from the kill
// to each one's next batch is reported), its database sessions and with them its locks
// and slots must go, its runs left InProgress must be closed as abandoned by the
// survivors, nothing may be deleted twice or wrongly, and the survivors must drain
// everything and exit 0.
func TestKill9MidDrain(t *testing.T) { onDatabases(t, true, testKill9MidDrain) }

func testKill9MidDrain(t *testing.T) {
	s := newScenario(t, failoverTables(), failoverCluster, failoverPasses)
	sampler := harness.StartSampler(s.db, harness.DefaultLockClasses)
	defer sampler.Stop()
	s.start(3)
	s.deleting()
	victim, moved := s.busiest()
	app := victim.AppName()
	s.fleet.Leave(victim.Name)
	killed := time.Now()
	if err := victim.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var released time.Duration
	s.eventually(30*time.Second, "the killed member's sessions and locks gone", func() (bool, error) {
		sessions, locks, err := s.db.Sessions(s.ctx, app)
		released = time.Since(killed)
		return sessions == 0 && locks == 0, err
	})
	took := s.takeovers(moved, killed, app, 60*time.Second)
	report("SIGKILL mid-drain", fmt.Sprintf("kill -9 to the next batch of each moved pass (%d passes)", len(moved)), durations(took)...)
	report("SIGKILL mid-drain", "kill -9 to the killed member's sessions, locks and slots gone", released)
	if err := s.fleet.WaitMembers(s.ctx, 30*time.Second, 2); err != nil {
		t.Error(err)
	}
	s.drained(guard)
	s.eventually(guard, "the killed member's runs closed by the survivors' recovery", func() (bool, error) {
		open, err := s.db.Count(s.ctx, `SELECT count(*) FROM retention_metadata WHERE state = 'InProgress' AND node_id = $1`, victim.Member())
		return open == 0, err
	})
	report("SIGKILL mid-drain", "kill -9 to the killed member's runs closed as abandoned", time.Since(killed))
	if n, err := s.db.Count(s.ctx, `SELECT count(*) FROM retention_metadata WHERE node_id = $1 AND stop_reason = 'abandoned'`, victim.Member()); err != nil || n == 0 {
		t.Errorf("no run of the killed member closed as abandoned (err %v)", err)
	}
	samples := sampler.Stop()
	s.stopAll()
	s.checkKeep()
	s.checkExclusive(map[string]time.Time{victim.Member(): killed})
	locks := s.checkLocksAfterDeaths(6, 1, map[string]time.Time{app: killed})
	s.checkSamples(samples, 6)
	if locks.WithoutSlotAfterDeath > 0 {
		// docs/cluster.md, "Slots after a kill": the killed member's last statement ran
		// on after its idle slot session was gone.
		t.Logf("%d of the killed member's batches ended after the kill without their slot", locks.WithoutSlotAfterDeath)
	}
	t.Logf("moved %v off %s: %v", moved, victim.Member(), took)
}

// TestSIGTERMMovesAtOnce stops the member running the most passes with SIGTERM while
// every pass drains. It must exit 0 having left the cluster: its membership key must be
// gone from etcd by the time it exits (a dead member's key stays until its lease runs
// out), its passes must run again on the survivors, and the keep-set must be exact.
func TestSIGTERMMovesAtOnce(t *testing.T) { onDatabases(t, true, testSIGTERMMovesAtOnce) }

func testSIGTERMMovesAtOnce(t *testing.T) {
	s := newScenario(t, failoverTables(), failoverCluster, failoverPasses)
	s.start(3)
	s.deleting()
	victim, moved := s.busiest()
	prefix := s.prefix
	if has, err := s.etcd.HasKeyContaining(s.ctx, prefix, victim.Member()); err != nil || !has {
		keys, _ := s.etcd.Keys(s.ctx, "/")
		t.Fatalf("etcd has no key under %s naming member %s before the SIGTERM (err %v; keys %q)", prefix, victim.Member(), err, keys)
	}
	s.fleet.Leave(victim.Name)
	deniedBefore := deniedSweeps(s.fleet.Running(), moved)
	termed := time.Now()
	if err := victim.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	code, err := victim.Wait(s.ctx, 60*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	_, _, exited := victim.Exited()
	if code != 0 {
		t.Errorf("%s exited %d after SIGTERM, want 0", victim.Name, code)
	}
	if has, err := s.etcd.HasKeyContaining(s.ctx, prefix, victim.Member()); err != nil || has {
		t.Errorf("member %s's key still in etcd when it had exited (err %v): it did not leave, its passes wait for the lease", victim.Member(), err)
	}
	took := s.takeovers(moved, termed, victim.AppName(), 60*time.Second)
	report("SIGTERM", fmt.Sprintf("SIGTERM to the next batch of each moved pass (%d passes)", len(moved)), durations(took)...)
	report("SIGTERM", "SIGTERM to exit (in-flight batches finish, the member leaves)", exited.Sub(termed))
	// The member gives its sweep locks back before it leaves, so the new owner's first
	// try of each moved pass takes the lock; a denied one waits a sweep interval.
	for name, n := range deniedSweeps(s.fleet.Running(), moved) {
		if n > deniedBefore[name] {
			t.Errorf("%s: %d sweeps of a moved pass denied their lock after the SIGTERM: the stopping member still held it when it left", name, n-deniedBefore[name])
		}
	}
	s.drained(guard)
	s.stopAll()
	s.checkKeep()
	s.checkLedgerCounts()
	s.checkExclusive(nil)
	s.checkLocks(6, 1)
	t.Logf("moved %v off %s: %v", moved, victim.Member(), took)
}

// deniedSweeps counts, per node, the sweeps of the passes in names that ended
// `elsewhere` (their lock held by another session), from the nodes' logs so far.
func deniedSweeps(nodes []*harness.Node, names []string) map[string]int {
	out := map[string]int{}
	for _, n := range nodes {
		out[n.Name] = len(n.Logged(func(m map[string]any) bool {
			pass, _ := m["pass"].(string)
			return m["msg"] == "sweep running elsewhere" && slices.Contains(names, pass)
		}))
	}
	return out
}
