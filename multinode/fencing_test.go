//go:build multinode

package multinode

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/retentionkit/retention/multinode/harness"
)

// pauseFor is how long a member stays frozen: past the provider's 3 s lease and the
// default fence_after (6 s), so the others drop it and it must fence itself on waking.
const pauseFor = 8 * time.Second

// TestPausedMemberFencesItself freezes the member running the most passes with
// SIGSTOP past the membership TTL, then resumes it. The survivors must drop it and
// carry on with their own passes meanwhile; the resumed member must fence itself
// (exit 3) and, restarted by the test as its process manager, rejoin; its sessions
// keep their locks while frozen, so nothing is deleted twice: no two sessions delete
// from one table at once and the ledger counts each row once.
func TestPausedMemberFencesItself(t *testing.T) { onDatabases(t, true, testPausedMemberFencesItself) }

func testPausedMemberFencesItself(t *testing.T) {
	s := newScenario(t, failoverTables(), failoverCluster, failoverPasses)
	s.start(3)
	s.deleting()
	victim, moved := s.busiest()
	member := victim.Member()
	theirs := 0 // tables the survivors are draining
	last, err := s.db.LastBatchApp(s.ctx, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for tbl, app := range last {
		if left, err := s.db.Remaining(s.ctx, tbl); err == nil && left > 0 && app != victim.AppName() {
			theirs++
		}
	}
	frozen := time.Now()
	if err := victim.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	var survivors []*harness.Node
	for _, n := range s.fleet.Running() {
		if n != victim {
			survivors = append(survivors, n)
		}
	}
	s.eventually(30*time.Second, "the survivors dropping the frozen member", func() (bool, error) {
		for _, n := range survivors {
			v, err := n.Cluster(s.ctx)
			if err != nil {
				return false, err
			}
			for _, m := range v.Members {
				if m.ID == member {
					return false, nil
				}
			}
		}
		return true, nil
	})
	dropped := time.Since(frozen)
	s.eventually(30*time.Second, fmt.Sprintf("%v frozen", pauseFor), func() (bool, error) { return time.Since(frozen) >= pauseFor, nil })
	carried := 0
	for _, n := range survivors {
		for _, tbl := range s.names() {
			if c, err := s.db.BatchesBy(s.ctx, tbl, n.AppName(), frozen.Add(time.Second)); err == nil && c > 0 {
				carried++
				break
			}
		}
	}
	if carried == 0 && theirs > 0 {
		t.Errorf("no survivor committed a batch while %s was frozen: the others did not carry on", victim.Name)
	}
	thawed := time.Now()
	if err := victim.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	code, err := victim.Wait(s.ctx, 60*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	_, _, exited := victim.Exited()
	if code != harness.ExitFenced {
		t.Fatalf("the resumed member exited %d, want %d (fenced)", code, harness.ExitFenced)
	}
	report("SIGSTOP 8s, SIGCONT", "freeze to the survivors dropping the member", dropped)
	report("SIGSTOP 8s, SIGCONT", "SIGCONT to exit 3 (fenced)", exited.Sub(thawed))
	s.eventually(guard, "the process manager restarting the fenced member and three members again", func() (bool, error) {
		return len(s.fleet.Restarts()) >= 1 && s.fleet.WaitMembers(s.ctx, time.Second, 3) == nil, nil
	})
	took := s.takeovers(moved, thawed, harness.AppName(member), 60*time.Second)
	report("SIGSTOP 8s, SIGCONT", fmt.Sprintf("SIGCONT to the next batch of each frozen pass elsewhere (%d passes)", len(moved)), durations(took)...)
	s.drained(guard)
	s.stopAll()
	s.checkKeep()
	s.checkLedgerCounts()
	s.checkExclusive(nil)
	s.checkLocks(6, 1)
}

// TestEtcdOutage stops etcd for a few seconds and starts it again, then freezes it
// past the lease TTL and resumes it, under three draining members. Whatever each member
// does (ride it out, or fence itself with exit 3 and be restarted by the test as its
// process manager), the cluster must end with three members that agree, every pass
// owned and running (fresh expired rows written after the outages are deleted on every
// table), and the keep-set exact.
func TestEtcdOutage(t *testing.T) {
	s := newScenario(t, tables("outage", 6, func(int) int { return rowsFor(25_000) }, 0), failoverCluster, failoverPasses)
	s.start(3)
	s.deleting()

	stopped := time.Now()
	if err := s.etcd.Stop(); err != nil {
		t.Fatal(err)
	}
	s.eventually(30*time.Second, "etcd down for 5s", func() (bool, error) { return time.Since(stopped) >= 5*time.Second, nil })
	if err := s.etcd.Start(s.ctx); err != nil {
		t.Fatal(err)
	}
	s.recovered("after etcd was stopped for 5s")

	frozen := time.Now()
	if err := s.etcd.Freeze(); err != nil {
		t.Fatal(err)
	}
	s.eventually(30*time.Second, "etcd frozen for 7s", func() (bool, error) { return time.Since(frozen) >= 7*time.Second, nil })
	if err := s.etcd.Thaw(); err != nil {
		t.Fatal(err)
	}
	s.recovered("after etcd was frozen for 7s")

	for i, tb := range s.tables {
		if err := s.db.AddRows(s.ctx, tb.Name, tb.Rows+1, tb.Rows+2000); err != nil {
			t.Fatal(err)
		}
		s.tables[i].Rows += 2000
	}
	fresh := time.Now()
	s.drained(guard)
	last, err := s.db.LastBatchApp(s.ctx, time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	for _, tbl := range s.names() {
		if _, _, ok, err := s.db.FirstBatchAfter(s.ctx, tbl, fresh, ""); err != nil || !ok {
			t.Errorf("pass %s deleted nothing after the outages (last batch by %s, err %v)", tbl, last[tbl], err)
		}
	}
	for _, r := range s.fleet.Restarts() {
		t.Logf("restarted %s after exit %d at %s (member %s)", r.Name, r.Code, r.ExitedAt.Format("15:04:05.000"), r.Member)
	}
	report("etcd outages", fmt.Sprintf("restarts by the process manager after exit 3 (stop 5s, then freeze 7s): %d", len(s.fleet.Restarts())))
	s.stopAll()
	s.checkKeep()
	s.checkExclusive(nil)
	s.checkLocks(6, 1)
}

// settle is how long the cluster must stay whole after an outage before the scenario
// goes on: past fence_after, so a member that is about to fence itself has done so.
const settle = 8 * time.Second

// recovered waits until three nodes run, agree on three members, and every pass has
// an owner, and that has held for settle; it reports how long it took from the end of
// the outage until the state that then held began.
func (s *scenario) recovered(what string) {
	s.t.Helper()
	from := time.Now()
	var began time.Time
	whole := func() (bool, error) {
		if err := s.fleet.WaitMembers(s.ctx, time.Second, 3); err != nil {
			began = time.Time{}
			return false, nil
		}
		if _, err := s.fleet.Owners(s.ctx, s.names()); err != nil {
			began = time.Time{}
			return false, nil
		}
		if began.IsZero() {
			began = time.Now()
		}
		return true, nil
	}
	if err := harness.PollWith(s.ctx, harness.ViewEvery, 2*time.Minute, "three members agreeing and every pass owned, steadily, "+what, harness.Steady(settle, whole)); err != nil {
		s.t.Fatal(err)
	}
	report("etcd outages", "end of the outage to three members and every pass owned (then steady for 8s), "+what, began.Sub(from))
}
