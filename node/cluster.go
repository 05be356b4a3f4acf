package node

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/node/admin"
	"github.com/retentionkit/retention/node/cluster"
	"github.com/retentionkit/retention/node/config"
	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/ledger"
)

// Cluster mode in the node (docs/cluster.md): the database is checked (PostgreSQL 14 or
// later, else a ConfigError), the node joins the cluster, every sweep takes its
// identity's advisory lock on a connection named retention:<member-id> with the settings
// that free a dead member's locks in seconds, and the delete slots are shared by every
// member.

// clusterState is what cluster mode adds to a node.
type clusterState struct {
	member   *cluster.Member
	conn     passes.SweepConnOptions // the lock-holding connections' settings
	slots    *passes.AdvisorySlots
	capacity int // cluster-wide delete slots per database
}

// ClusterOptions turns cfg's cluster: section into a member's options, for Open and for
// `retention status`, which reads the members without joining.
func ClusterOptions(cfg *config.Config, log *logrus.Logger) cluster.Options {
	c := cfg.Cluster
	return cluster.Options{Name: c.Name, Endpoints: c.Etcd.Endpoints, Prefix: c.Etcd.Prefix, Bind: c.Bind, Advertise: c.Advertise,
		DrainHelpers: c.DrainHelpers, FenceAfter: c.FenceAfterOr0(), StartupTimeout: c.StartupTimeoutOr0(),
		LeaveGrace: cfg.ShutdownGrace(), Logger: log}
}

// joinCluster checks the database, joins the cluster and puts every table pass under its
// sweep lock; what it acquired is undone by Close. It does nothing outside cluster mode.
func (n *Node) joinCluster(ctx context.Context) error {
	if !n.cfg.Cluster.Enabled {
		return nil
	}
	if n.opts.System != nil {
		return badConfig(errors.New("cluster.enabled: the node runs in the cluster member's actor system; leave Options.System nil"))
	}
	if err := CheckClusterDatabase(ctx, n.db, n.cfg); err != nil {
		return err
	}
	for _, p := range n.cfg.Passes {
		if base, ok := cluster.HelperOf(p.Name); ok && n.cfg.Cluster.DrainHelpers > 0 {
			return badConfig(fmt.Errorf("pass %q: with cluster.drain_helpers, a name of the form name#k is a drain helper of %q: rename the pass", p.Name, base))
		}
	}
	n.log.WithField("endpoints", strings.Join(n.cfg.Cluster.Etcd.Endpoints, ",")).Info("joining the cluster")
	o := ClusterOptions(n.cfg, n.log)
	o.Provider = n.opts.ClusterProvider
	m, err := cluster.Join(ctx, o)
	if err != nil {
		return err
	}
	cs := &clusterState{member: m, conn: passes.SweepConnOptions{ApplicationName: passes.MemberAppPrefix + m.ID()}}
	// An error path leaves at once; Stop leaves first, gracefully unless fenced, and
	// then this does nothing (Leave is once).
	n.undo.push(func() { leave(m, false) })
	cs.capacity = n.cfg.Cluster.MaxConcurrentDeletes
	if cs.capacity <= 0 {
		cs.capacity = n.cfg.Node.MaxConcurrentDeletes
	}
	if cs.capacity <= 0 {
		cs.capacity = actors.DefaultMaxConcurrentDeletes
	}
	cs.slots, err = passes.OpenAdvisorySlotsWith(ctx, n.cfg.Database.Driver, n.cfg.Database.DSN, passes.DefaultDatabase, cs.conn)
	if err != nil {
		return fmt.Errorf("cluster: delete slots: %s", passes.RedactTextFor(n.cfg.Database.Driver, err.Error(), n.cfg.Database.DSN))
	}
	n.undo.push(func() { _ = cs.slots.Close() })
	if err := LockTables(n.passes, cs.conn); err != nil {
		return err
	}
	if err := n.helperCleanup(); err != nil {
		return badConfig(err)
	}
	m.SetReaders(LockReader(n.db, n.cfg), cs.slotReader())
	n.cluster = cs
	n.log.WithField("member", m.ID()).WithField("address", m.Address()).Info("joined the cluster")
	return nil
}

// CheckClusterDatabase refuses a database cluster mode cannot run on with a ConfigError:
// SQLite, PostgreSQL older than 14, or what the MySQL driver refuses (Galera, a
// multiplexing proxy). A server that does not answer is a plain error.
func CheckClusterDatabase(ctx context.Context, db *bun.DB, cfg *config.Config) error {
	if err := passes.CheckClusterSupport(ctx, db); err != nil {
		if errors.Is(err, passes.ErrClusterUnsupported) {
			return badConfig(fmt.Errorf("cluster.enabled: %w", err))
		}
		return fmt.Errorf("cluster: %s", passes.RedactTextFor(cfg.Database.Driver, err.Error(), cfg.Database.DSN))
	}
	return nil
}

// LockTables puts every table pass of ps under its sweep lock, held on connections with
// conn's settings, in place. A cluster member does it at join; a one-off `sweep` of a
// cluster's passes does it too, so it never sweeps beside a member.
func LockTables(ps []Pass, conn passes.SweepConnOptions) error {
	for i, p := range ps {
		if !p.IsTable() {
			continue
		}
		locked, err := p.Table.WithSweepLock(passes.SweepLockOptions{Conn: conn})
		if err != nil {
			return badConfig(err)
		}
		ps[i] = p.WithTable(locked)
	}
	return nil
}

// leaveTimeout bounds leaving the cluster: protoactor's graceful leave waits 2s for the
// others to take over, and an unreachable etcd must not hold the process.
const leaveTimeout = 10 * time.Second

// leave leaves the cluster within a bound, logging nothing: a node on its way out.
func leave(m *cluster.Member, graceful bool) {
	ctx, cancel := context.WithTimeout(context.Background(), leaveTimeout)
	defer cancel()
	_ = m.Leave(ctx, graceful)
}

// helperRegistrations are the drain helpers of every table pass: the same table under
// the helper's identity, so its own lock.
func (n *Node) helperRegistrations() []passes.Registration {
	if n.cluster == nil || n.cfg.Cluster.DrainHelpers <= 0 {
		return nil
	}
	var out []passes.Registration
	for _, p := range n.passes {
		if !p.IsTable() {
			continue
		}
		t, opts := p.Table, p.Options()
		out = append(out, cluster.Helpers(p.Registration, n.cfg.Cluster.DrainHelpers, func(identity string, f passes.Factory) passes.Factory {
			locked, err := t.WithSweepLock(passes.SweepLockOptions{Identity: identity, Conn: n.cluster.conn})
			if err != nil { // PostgreSQL was checked at join
				return f
			}
			return locked.Registration(opts).New
		})...)
	}
	return out
}

// helperCleanup lists each drain helper's runs for the metadata cleanup wherever its
// pass's runs are listed, with the same retention, so helpers' runs are pruned like
// their pass's (a name not listed is never pruned).
func (n *Node) helperCleanup() error {
	if n.ledger == nil || n.cfg.Cluster.DrainHelpers <= 0 || !n.cfg.CleanupEnabled() {
		return nil
	}
	cfg := n.cfg.CleanupConfig()
	names := passNames(n.passes)
	for _, e := range cfg.Names {
		if !slices.Contains(names, e.Name) {
			continue
		}
		for k := 1; k <= n.cfg.Cluster.DrainHelpers; k++ {
			cfg.Names = append(cfg.Names, ledger.NameRetention{Name: cluster.HelperName(e.Name, k), Retention: e.Retention})
		}
	}
	plan, err := cfg.Build()
	if err != nil {
		return fmt.Errorf("metadata_cleanup: %w", err)
	}
	n.plan = plan
	return nil
}

// exclusive puts a registration that is not a table (the ledger's own loops) under its
// sweep lock in cluster mode.
func (n *Node) exclusive(r passes.Registration) (passes.Registration, error) {
	if n.cluster == nil {
		return r, nil
	}
	f, err := passes.ExclusiveWith(n.db, passes.SweepLockOptions{Identity: r.Name, Conn: n.cluster.conn}, r.New)
	if err != nil {
		return r, err
	}
	r.New = f
	return r, nil
}

// clusterRuntime adds cluster mode's part to a runtime's configuration: the member's
// actor system, placement, and the shared slots.
func (n *Node) clusterRuntime(cfg actors.Config) actors.Config {
	if n.cluster == nil {
		return cfg
	}
	cs := n.cluster
	cfg.System, cfg.Placed = cs.member.System(), true
	cfg.MaxConcurrentDeletes = cs.capacity
	cfg.SlotPools = func(string, int) actors.AdmissionPool { return actors.NewAdvisorySlotPool(cs.slots, cs.capacity) }
	if n.ledger != nil && n.cfg.Cluster.DrainHelpers > 0 {
		cfg.Observers = append(cfg.Observers, &cluster.DrainObserver{Member: cs.member, Requests: n.ledger, Helpers: n.cfg.Cluster.DrainHelpers})
	}
	return cfg
}

// LockReader reads who holds the sweep locks of the named passes on cfg's database, with
// the DSN redacted from its errors: the member's view of the locks, and status's.
func LockReader(db *bun.DB, cfg *config.Config) cluster.LockReader {
	return func(ctx context.Context, ids []string) (map[string]passes.LockHolderInfo, error) {
		held, err := passes.LockHolders(ctx, db, ids)
		if err != nil {
			return nil, fmt.Errorf("%s", passes.RedactTextFor(cfg.Database.Driver, err.Error(), cfg.Database.DSN))
		}
		return held, nil
	}
}

func (cs *clusterState) slotReader() cluster.SlotReader {
	return func(ctx context.Context) ([]admin.ClusterSlots, error) {
		inUse, err := cs.slots.SlotsInUse(ctx, cs.capacity)
		if err != nil {
			return nil, err
		}
		return []admin.ClusterSlots{{Database: passes.DefaultDatabase, InUse: inUse, Capacity: cs.capacity}}, nil
	}
}
