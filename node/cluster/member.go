package cluster

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/cluster"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/retentionkit/retention/actors"
)

// Member is this node as a member of the cluster: its actor system (the runtime runs
// in it), its place in the topology, the reconciler that activates the passes it owns
// and the watchdog that fences it.
type Member struct {
	o        Options
	system   *actor.ActorSystem
	cluster  *cluster.Cluster
	provider cluster.ClusterProvider

	rt      atomic.Pointer[actors.Runtime]
	grains  sync.Map // identity -> *actor.PID of its local grain
	leaving sync.Map // identity -> struct{}: a deactivation in flight

	fenced     chan *FencedError
	metrics    *memberMetrics
	leavingNow atomic.Bool // Leave is shutting the remote down (see leavingFilter)

	mu         sync.Mutex
	locks      LockReader
	slotReader SlotReader
	stopLoops  context.CancelFunc
	loopsDone  sync.WaitGroup
	left       bool
}

// System is the actor system the member runs in; give it to the runtime
// (actors.Config.System) so the grains and the pass actors share it.
func (m *Member) System() *actor.ActorSystem { return m.system }

// ID is the member's id: the actor system's, fresh for every process, so a restarted
// node joins as a new member (protoactor blocks a member that left, for good). In
// cluster mode it is also the node id in the ledger and the tail of the sweep
// connections' application_name.
func (m *Member) ID() string { return m.system.ID }

// Address is the host:port other members reach this one at.
func (m *Member) Address() string { return m.system.Address() }

// Name is the cluster's name.
func (m *Member) Name() string { return m.o.Name }

// Fenced delivers why the member fenced itself, once; the node then stops its
// runtime and exits with code 3 so its process manager starts it as a new member.
func (m *Member) Fenced() <-chan *FencedError { return m.fenced }

// Serve attaches the started runtime (built with actors.Config.Placed and System) and
// starts the reconciler and the watchdog; they run until Leave.
func (m *Member) Serve(ctx context.Context, rt *actors.Runtime) {
	m.rt.Store(rt)
	m.mu.Lock()
	defer m.mu.Unlock()
	loops, cancel := context.WithCancel(context.WithoutCancel(ctx))
	m.stopLoops = cancel
	m.loopsDone.Add(2)
	go func() { defer m.loopsDone.Done(); m.reconcile(loops) }()
	go func() {
		defer m.loopsDone.Done()
		w := &Watchdog{Source: memberSource{m}, Clock: m.o.Clock, FenceAfter: m.o.FenceAfter}
		if err := w.Run(loops); err != nil {
			m.metrics.fencings.Inc()
			m.fenced <- err
		}
	}()
}

// Leave stops the reconciler and the watchdog and leaves the cluster. Stop the runtime
// first: its in-flight batches finish and every sweep gives its advisory lock back, so
// the new owners' first tries take the locks. With graceful the member deregisters from
// etcd, so the others take its passes at once instead of after the member lease runs out.
// ctx bounds the leave: an unreachable etcd must not hold the process.
func (m *Member) Leave(ctx context.Context, graceful bool) error {
	m.mu.Lock()
	if m.left {
		m.mu.Unlock()
		return nil
	}
	m.left = true
	if m.stopLoops != nil {
		m.stopLoops()
	}
	m.mu.Unlock()
	m.loopsDone.Wait()
	m.leavingNow.Store(true)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() { _ = recover() }() // a provider that fails on the way out changes nothing now
		m.shutdown(graceful)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return errors.New("cluster: leaving did not finish in time (is etcd reachable?); the member lease expires on its own")
	}
}

// shutdown leaves protoactor's cluster: protoactor's Cluster.Shutdown, except that the
// remote's gRPC server is stopped outright instead of gracefully, and without its 2 s
// wait for ownership transfers (the runtime has stopped every pass by then). The
// remote's graceful stop clears its endpoint manager's connection map while endpoint
// writers may still be publishing "endpoint terminated" for peers that hung up; the
// map is then nil under them and the process panics in a protoactor goroutine, where
// no recover can reach (the multi-process suite saw it on a SIGTERM: a nil pointer in
// sync.(*Map).Delete from endpointManager.removeEndpoint, exit 2). The node exits
// right after leaving, so nothing is lost by not draining the gRPC streams.
func (m *Member) shutdown(graceful bool) {
	c := m.cluster
	c.Gossip.SetState(cluster.GracefullyLeftKey, &emptypb.Empty{})
	c.ActorSystem.Shutdown()
	if graceful {
		_ = c.Config.ClusterProvider.Shutdown(true) // deregisters: the others see it leave at once
		c.IdentityLookup.Shutdown()
		c.Gossip.Shutdown()
	}
	c.Remote.Shutdown(false)
}

// members is the current topology.
func (m *Member) members() cluster.Members {
	return m.cluster.MemberList.Members().Members()
}

// memberID is a topology member's id as the rest of the node shows it: the etcd
// provider registers "<cluster>@<system id>", the in-memory one the bare id.
func memberID(mem *cluster.Member) string {
	if i := strings.LastIndexByte(mem.Id, '@'); i >= 0 {
		return mem.Id[i+1:]
	}
	return mem.Id
}

// activationTimeout bounds one activation: spawning a pass actor is quick, so longer
// means the runtime is stuck or stopping.
const activationTimeout = 10 * time.Second
