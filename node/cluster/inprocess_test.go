//go:build cluster

// In-process cluster tests on protoactor's in-memory provider. protoactor's cluster
// races inside itself at our version, so these run without -race, behind the cluster
// build tag: make cluster.

package cluster_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"testing"
	"time"

	protocluster "github.com/asynkron/protoactor-go/cluster"
	"github.com/asynkron/protoactor-go/cluster/clusterproviders/test"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/sirupsen/logrus"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/actors/actortest"
	"github.com/retentionkit/retention/node/cluster"
	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/dbtest"
	"github.com/retentionkit/retention/passes/ledger"
)

// node is one member with its runtime.
type node struct {
	m  *cluster.Member
	rt *actors.Runtime
}

func quiet() *logrus.Logger {
	l := logrus.New()
	l.SetOutput(io.Discard)
	if testing.Verbose() {
		l.SetOutput(os.Stderr)
	}
	return l
}

// fixture is a cluster of members sharing one in-memory agent.
type fixture struct {
	t     *testing.T
	agent *test.InMemAgent
	names []string
	regs  func(names []string) []passes.Registration
	opts  cluster.Options
	nodes []*node
	// observers, when set, adds observers made for each member to its runtime.
	observers func(m *cluster.Member) []actors.Observer
	// started, when set, runs for each member once it serves.
	started func(nd *node)
}

func newFixture(t *testing.T, n int, regs func([]string) []passes.Registration, names ...string) *fixture {
	f := &fixture{t: t, agent: test.NewInMemAgent(), names: names, regs: regs,
		opts: cluster.Options{Logger: quiet(), FenceAfter: 500 * time.Millisecond, ReconcileEvery: 100 * time.Millisecond, LeaveGrace: 5 * time.Second}}
	for range n {
		f.add()
	}
	return f
}

func (f *fixture) add() *node {
	f.t.Helper()
	o := f.opts
	o.Provider = func() (protocluster.ClusterProvider, error) {
		return test.NewTestProvider(f.agent, test.WithTestProviderRefreshTtl(time.Second)), nil
	}
	m, err := cluster.Join(context.Background(), o)
	if err != nil {
		f.t.Fatal(err)
	}
	cfg := actors.Config{System: m.System(), Placed: true, Logger: quiet()}
	if f.observers != nil {
		cfg.Observers = f.observers(m)
	}
	rt := actors.New(cfg)
	if err := rt.Register(f.regs(f.names)...); err != nil {
		f.t.Fatal(err)
	}
	if err := rt.Start(context.Background()); err != nil {
		f.t.Fatal(err)
	}
	m.Serve(context.Background(), rt)
	nd := &node{m: m, rt: rt}
	f.nodes = append(f.nodes, nd)
	if f.started != nil {
		f.started(nd)
	}
	f.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = rt.Stop(ctx)
		_ = m.Leave(ctx, false)
	})
	return nd
}

// eventually polls cond every 20ms until it holds or the deadline passes.
func eventually(t *testing.T, within time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.After(within)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, state := cond()
		if ok {
			return
		}
		select {
		case <-deadline:
			t.Fatalf("%s: not within %v; last: %s", what, within, state)
		case <-tick.C:
		}
	}
}

// exactlyOnce checks every name is active on exactly one of nodes.
func exactlyOnce(names []string, nodes []*node) (bool, string) {
	where := map[string][]int{}
	for i, nd := range nodes {
		for _, a := range nd.rt.Active() {
			where[a] = append(where[a], i)
		}
	}
	for _, n := range names {
		if len(where[n]) != 1 {
			return false, fmt.Sprintf("%s active on members %v (all: %v)", n, where[n], where)
		}
	}
	return true, ""
}

func passNames(n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("p%02d", i))
	}
	return out
}

// idleRegs registers each name as a pass with nothing to delete, sweeping hourly.
func idleRegs(names []string) []passes.Registration {
	var regs []passes.Registration
	for _, n := range names {
		o := passes.DefaultOptions()
		o.RetentionPeriod, o.MaxStartupStagger, o.SweepInterval = passes.Retain(time.Hour), 0, time.Hour
		regs = append(regs, passes.Registration{Name: n, New: actortest.NewFakePass().Factory(), Options: o})
	}
	return regs
}

func TestEachPassActiveOnExactlyOneOfThreeMembers(t *testing.T) {
	names := passNames(30)
	f := newFixture(t, 3, idleRegs, names...)
	eventually(t, 20*time.Second, "every pass placed once", func() (bool, string) { return exactlyOnce(names, f.nodes) })
	spread := 0
	for _, nd := range f.nodes {
		if len(nd.rt.Active()) > 0 {
			spread++
		}
	}
	if spread < 2 {
		t.Fatalf("30 passes all on one member: placement does not spread")
	}
	view, err := f.nodes[0].m.ClusterView(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(view.Members) != 3 || len(view.Passes) != len(names) {
		t.Fatalf("view: %d members, %d passes", len(view.Members), len(view.Passes))
	}
	for _, p := range view.Passes { // the view's owner is where the pass runs
		i := slices.IndexFunc(f.nodes, func(nd *node) bool { return nd.m.ID() == p.Owner })
		if i < 0 || !slices.Contains(f.nodes[i].rt.Active(), p.Name) {
			t.Fatalf("view says %s is owned by %q, which does not run it", p.Name, p.Owner)
		}
	}
}

func TestSurvivorsTakeOverALostMembersPasses(t *testing.T) {
	names := passNames(30)
	f := newFixture(t, 3, idleRegs, names...)
	eventually(t, 20*time.Second, "every pass placed once", func() (bool, string) { return exactlyOnce(names, f.nodes) })
	// the member with the most passes is lost (the hash may leave one with none)
	sort.Slice(f.nodes, func(i, j int) bool { return len(f.nodes[i].rt.Active()) < len(f.nodes[j].rt.Active()) })
	lost := f.nodes[2]
	f.agent.DeregisterService(lost.m.ID()) // as a crash: the member does not leave itself
	survivors := f.nodes[:2]
	eventually(t, 10*time.Second, "the lost member's passes active on the survivors", func() (bool, string) { return exactlyOnce(names, survivors) })
	eventually(t, 10*time.Second, "the dropped member runs nothing", func() (bool, string) {
		return len(lost.rt.Active()) == 0, fmt.Sprint(lost.rt.Active())
	})
	select { // and it fences itself: its own id is gone from its member list
	case err := <-lost.m.Fenced():
		if err == nil {
			t.Fatal("fenced without a reason")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the dropped member did not fence itself")
	}
}

func TestGracefulLeaveMovesPassesAtOnce(t *testing.T) {
	names := passNames(20)
	f := newFixture(t, 2, idleRegs, names...)
	eventually(t, 20*time.Second, "every pass placed once", func() (bool, string) { return exactlyOnce(names, f.nodes) })
	leaving := f.nodes[1]
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := leaving.rt.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := leaving.m.Leave(ctx, true); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "every pass on the remaining member", func() (bool, string) {
		return exactlyOnce(names, f.nodes[:1])
	})
}

// A pass that leaves work asks for its helpers through the ledger's work queue; the
// members owning the helper identities claim the requests, the helpers sweep, and stop
// when their sweep comes up short.
func TestDrainHelpersSweepAndStop(t *testing.T) {
	db := dbtest.SQLite(t)
	if _, err := ledger.Migrate(context.Background(), db, "c12_"); err != nil {
		t.Fatal(err)
	}
	l, err := ledger.New(db, "c12_")
	if err != nil {
		t.Fatal(err)
	}
	main := actortest.NewFakePass(actortest.Rows(10), actortest.Rows(10)) // a full sweep: batch limit, work left
	helpers := map[string]*actortest.FakePass{                            // one full batch, then short
		"events#1": actortest.NewFakePass(actortest.Rows(10), actortest.Rows(3)),
		"events#2": actortest.NewFakePass(actortest.Rows(10), actortest.Rows(3)),
	}
	regs := func([]string) []passes.Registration {
		o := passes.DefaultOptions()
		// a long stagger, so the pass sweeps only when the test asks (below), once every
		// member is up and placement has settled
		o.RetentionPeriod, o.MaxStartupStagger, o.SweepInterval, o.BatchSize, o.MaxBatchesPerSweep = passes.Retain(time.Hour), 24*time.Hour, 24*time.Hour, 10, 2
		base := passes.Registration{Name: "events", New: main.Factory(), Options: o}
		out := []passes.Registration{base}
		for _, h := range cluster.Helpers(base, 2, nil) {
			h.New = helpers[h.Name].Factory()
			out = append(out, h)
		}
		return out
	}
	f := &fixture{t: t, agent: test.NewInMemAgent(), regs: regs,
		opts: cluster.Options{Logger: quiet(), FenceAfter: 5 * time.Second, ReconcileEvery: 100 * time.Millisecond, LeaveGrace: 5 * time.Second},
		observers: func(m *cluster.Member) []actors.Observer {
			return []actors.Observer{&actors.LedgerObserver{Ledger: l}, &cluster.DrainObserver{Member: m, Requests: l, Helpers: 2}}
		},
		started: func(nd *node) {
			poller := &actors.WorkQueuePoller{Runtime: nd.rt, Ledger: l, Interval: 50 * time.Millisecond, Claimable: nd.m.Owned, Trigger: nd.m.TriggerClaimed}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { defer close(done); poller.Run(ctx) }()
			t.Cleanup(func() { cancel(); <-done })
		},
	}
	for range 3 {
		f.add()
	}
	if off := passes.StaggerOffset("events", 24*time.Hour); off < time.Minute {
		t.Fatalf("the pass's stagger offset is %v: it would sweep before the test asks", off)
	}
	eventually(t, 20*time.Second, "the pass placed once", func() (bool, string) { return exactlyOnce([]string{"events"}, f.nodes) })
	if _, err := l.RequestSweep(context.Background(), "events", time.Now()); err != nil { // as retention trigger does
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "both helpers swept and came up short", func() (bool, string) {
		state := ""
		for _, name := range sortedKeys(helpers) {
			calls := len(helpers[name].Calls())
			state += fmt.Sprintf("%s: %d calls; ", name, calls)
			if calls < 2 {
				return false, state
			}
		}
		return true, state
	})
	eventually(t, 10*time.Second, "no helper active anywhere once short", func() (bool, string) {
		var active []string
		for _, nd := range f.nodes {
			for _, a := range nd.rt.Active() {
				if _, helper := cluster.HelperOf(a); helper {
					active = append(active, a)
				}
			}
		}
		return len(active) == 0, fmt.Sprint(active)
	})
	if calls := len(main.Calls()); calls < 2 {
		t.Fatalf("the pass itself ran %d batches, want its full sweep of 2", calls)
	}
	var runs []ledger.Run
	for _, name := range sortedKeys(helpers) {
		rs, err := l.Runs(context.Background(), name, 10)
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, rs...)
	}
	for _, r := range runs {
		if r.State == ledger.InProgress || r.State == ledger.Pending {
			t.Fatalf("helper run %d of %s left %s", r.ID, r.Name, r.State)
		}
	}
}

func sortedKeys(m map[string]*actortest.FakePass) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestMemberMetrics(t *testing.T) {
	names := passNames(6)
	f := newFixture(t, 2, idleRegs, names...)
	eventually(t, 20*time.Second, "every pass placed once", func() (bool, string) { return exactlyOnce(names, f.nodes) })
	reg := prometheus.NewRegistry()
	if err := f.nodes[0].m.Register(reg); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "the gauges follow the topology", func() (bool, string) {
		families, err := reg.Gather()
		if err != nil {
			return false, err.Error()
		}
		got := map[string]float64{}
		for _, fam := range families {
			for _, m := range fam.GetMetric() {
				switch {
				case m.GetGauge() != nil:
					got[fam.GetName()] += m.GetGauge().GetValue()
				case m.GetCounter() != nil:
					got[fam.GetName()] += m.GetCounter().GetValue()
				}
			}
		}
		owned := float64(len(f.nodes[0].rt.Active()))
		ok := got["retention_cluster_members"] == 2 && got["retention_cluster_owned_passes"] == owned &&
			got["retention_cluster_fencing_exits_total"] == 0
		_, slots := got["retention_cluster_slots_in_use"]
		return ok && slots, fmt.Sprint(got)
	})
}
