package node

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/asynkron/protoactor-go/actor"
	protocluster "github.com/asynkron/protoactor-go/cluster"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/sirupsen/logrus"
	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/node/admin"
	"github.com/retentionkit/retention/node/cluster"
	"github.com/retentionkit/retention/node/config"
	"github.com/retentionkit/retention/node/metrics"
	"github.com/retentionkit/retention/node/ui"
	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/ledger"
)

// Options are what a program adds to a configuration file: its own Go passes, where the
// node logs, and what `retention run` serves itself. The zero value is a node of the
// file's passes that logs nowhere, retries its startup checks for DefaultStartupRetry
// and leaves serving its admin handler to the host.
type Options struct {
	// Passes are extra passes (GoPass for a passes.Pass written in Go) run beside the
	// file's table passes; their names must not repeat the file's.
	Passes []Pass
	// Logger receives the node's and protoactor's lines; nil discards them, because a
	// library should not write to its host's stderr unasked.
	Logger *logrus.Logger
	// System is an actor system of the host's for the passes to run in; nil makes one
	// that Stop shuts down. Cluster mode runs in the member's system and refuses one.
	System *actor.ActorSystem
	// Observers hear every pass event after the node's ledger and metrics have, so a
	// host's observer sees a sweep the ledger already holds.
	Observers []actors.Observer
	// Startup bounds the startup checks' retries while the database does not answer;
	// the zero value takes DefaultStartupRetry and DefaultStartupAttempt.
	Startup StartupOptions
	// ClusterProvider builds the cluster's membership provider in cluster mode; nil (the
	// default) is etcd at the file's cluster.etcd endpoints. A test passes protoactor's
	// in-memory provider, as node/cluster's tests do.
	ClusterProvider func() (protocluster.ClusterProvider, error)
	// ServeAdmin has Start listen on the file's node.admin address and serve Handler
	// there, as `retention run` does; false (the default) leaves serving to the host,
	// which mounts Handler on its own server.
	ServeAdmin bool
}

// Node is a retention node built from a configuration: its database, ledger, passes,
// runtime, metrics and admin handler, and in cluster mode its membership. Open builds
// it, Start runs it, Stop stops it and Close releases what Open and Start acquired, in
// one place, whichever step failed. Call Start, Stop and Close from one goroutine;
// Status, Verdict, Handler and Gatherer may be called from any.
type Node struct {
	cfg    *config.Config
	opts   Options
	db     *bun.DB
	log    *logrus.Logger
	ledger *ledger.Ledger // nil when the file disables the ledger
	// journal is the table passes' partition journal, nil without a ledger; it learns
	// the node's id when the node joins the ledger.
	journal *ledger.PartitionJournal
	passes  []Pass
	plan    *ledger.Plan // the metadata cleanup's; nil when the file turns it off
	rt      *actors.Runtime
	reg     *prometheus.Registry
	admin   *admin.Handler
	// cluster is cluster mode's state once joined; nil outside it.
	cluster *clusterState
	// undo releases, last first, everything Open and Start acquired (see Close).
	undo closers
	// adminAddr is the bound address of the admin listener; "" without one.
	adminAddr string
	// stopPolling ends the live settings and the work-queue poller (Start to Stop).
	stopPolling func()
	// fenced delivers the member's fencing once (see Fenced); fence keeps it for Stop,
	// and stopWatch ends the goroutine that forwards it.
	fenced    chan *cluster.FencedError
	fence     atomic.Pointer[cluster.FencedError]
	stopWatch func()

	// started and stopped are read by Verdict from any goroutine.
	started, stopped atomic.Bool
	closed           bool
}

// Open validates cfg, opens its database, builds the file's table passes and opts' Go
// passes, runs the startup checks (retried within opts.Startup while the database does
// not answer), creates or upgrades the ledger tables (unless `ledger.migrate: false`),
// joins the cluster in cluster mode, joins the ledger with a heartbeat, and builds the
// runtime, the metrics registry and the admin handler: everything `retention run`
// acquires before its passes start. A configuration found wrong is a *ConfigError. On
// error nothing stays open; ctx bounds Open only (cancel it to give up waiting for the
// database or etcd).
func Open(ctx context.Context, cfg *config.Config, opts Options) (*Node, error) {
	log := opts.Logger
	if log == nil {
		log = logrus.New()
		log.SetOutput(io.Discard)
	}
	t, err := OpenTables(ctx, cfg, TablesOptions{Logger: log})
	if err != nil {
		return nil, err
	}
	n := &Node{cfg: cfg, opts: opts, db: t.DB, log: log, ledger: t.Ledger, journal: t.journal, passes: append(t.Passes, opts.Passes...), plan: t.Plan,
		fenced: make(chan *cluster.FencedError, 1), stopPolling: func() {}, stopWatch: func() {}}
	n.undo.push(func() { _ = t.Close() })
	if err := n.open(ctx); err != nil {
		n.undo.close()
		return nil, err
	}
	return n, nil
}

// OpenDatabase opens cfg's database as a node does, for a program (or a one-off command
// such as `retention validate`, `status` or the ledger's) that needs it without a node:
// in cluster mode with client-side keepalives too, so a member whose database went
// silent fails its statements within seconds (Validate refused cluster mode on a driver
// without session locks); with o.Existing, never creating it. A DSN that does not parse
// is a *ConfigError; the DSN is redacted from every error. The caller closes the
// database.
func OpenDatabase(ctx context.Context, cfg *config.Config, o DatabaseOptions) (*bun.DB, error) {
	var db *bun.DB
	var err error
	if o.Existing {
		db, err = passes.OpenExisting(ctx, cfg.Database.Driver, cfg.Database.DSN)
	} else {
		var po passes.OpenOptions
		if cfg.Cluster.Enabled {
			po.Cluster = &passes.SweepConnOptions{}
		}
		db, err = passes.OpenWith(ctx, cfg.Database.Driver, cfg.Database.DSN, po)
	}
	if err != nil {
		shown := fmt.Errorf("database %s: %s", passes.RedactDSNFor(cfg.Database.Driver, cfg.Database.DSN), passes.RedactTextFor(cfg.Database.Driver, err.Error(), cfg.Database.DSN))
		if errors.Is(err, passes.ErrBadDSN) {
			return nil, badConfig(shown)
		}
		return nil, shown
	}
	return db, nil
}

// open is Open after the database, ledger and table passes (OpenTables): each step
// pushes its undo onto n.undo, so a failing step returns without cleaning up by hand.
func (n *Node) open(ctx context.Context) error {
	if err := CheckStartup(ctx, n.log, n.passes, n.plan, n.opts.Startup); err != nil {
		return err
	}
	if n.ledger != nil {
		if err := MigrateLedger(ctx, n.log, n.db, n.cfg); err != nil {
			return err
		}
	}
	if err := n.joinCluster(ctx); err != nil {
		return err
	}
	if err := n.joinLedger(ctx); err != nil {
		return err
	}
	return n.build(ctx)
}

// joinLedger makes the node a node of the ledger (JoinLedger), under the member's id in
// cluster mode; Close stops the heartbeat.
func (n *Node) joinLedger(ctx context.Context) error {
	if n.ledger == nil {
		return nil
	}
	id := ""
	if n.cluster != nil {
		id = n.cluster.member.ID()
	}
	joined, stop, err := JoinLedger(ctx, n.log, n.ledger, id)
	if err != nil {
		return err
	}
	n.undo.push(stop)
	n.ledger = joined
	if n.journal != nil {
		n.journal.SetNode(joined.NodeID())
	}
	return nil
}

// build makes the runtime, the metrics registry and the admin handler. The backlog is
// also sampled at every sweep's end, so its chart fills with nobody scraping /metrics;
// the sampler lives until Close.
func (n *Node) build(ctx context.Context) error {
	m := metrics.NewObserver()
	backlog := BacklogCollector(n.passes, n.ledger)
	sampling, stop := context.WithCancel(context.WithoutCancel(ctx))
	n.undo.push(stop)
	var observers []actors.Observer
	if n.ledger != nil {
		observers = append(observers, &actors.LedgerObserver{Ledger: n.ledger})
	}
	observers = append(observers, m)
	observers = append(observers, n.opts.Observers...)
	observers = append(observers, backlog.SampleSweeps(sampling, 0, nil))
	if err := n.runtime(observers); err != nil {
		return err
	}
	if err := n.registry(m, backlog); err != nil {
		return err
	}
	return n.adminHandler(backlog)
}

// runtime registers every pass (in cluster mode with its drain helpers, in the member's
// actor system, under the shared slots) and, with a ledger, its run recovery and
// cleanups, which in cluster mode one member runs at a time.
func (n *Node) runtime(observers []actors.Observer) error {
	reporter := actors.LogFailureReporter{Logger: n.log, Redact: func(err error) string {
		return passes.RedactTextFor(n.cfg.Database.Driver, err.Error(), n.cfg.Database.DSN)
	}}
	n.rt = actors.New(n.clusterRuntime(actors.Config{System: n.opts.System, Logger: n.log,
		MaxConcurrentDeletes: n.cfg.Node.MaxConcurrentDeletes, Observers: observers, FailureReporter: reporter}))
	regs := make([]passes.Registration, 0, len(n.passes))
	for _, p := range n.passes {
		regs = append(regs, p.Registration)
	}
	for _, r := range append(regs, n.helperRegistrations()...) {
		if err := n.rt.Register(r); err != nil {
			return badConfig(err)
		}
	}
	// The ledger's own loops are passes like any other: one member runs each.
	for _, r := range LedgerLoops(n.ledger, n.plan, n.rt.PassNames(), func(w string) { n.log.Warn(w) }) {
		r, err := n.exclusive(r)
		if err != nil {
			return err
		}
		if err := n.rt.Register(r); err != nil {
			return err
		}
	}
	return nil
}

// registry is the node's own Prometheus registry, so a host's default registry is left
// alone: the passes' metrics with a zero series for every pass, their tables' backlog and
// vacuum state, the process collectors and, in cluster mode, the member's metrics.
func (n *Node) registry(m *metrics.Observer, backlog *metrics.BacklogCollector) error {
	n.reg = prometheus.NewRegistry()
	if err := m.Register(n.reg, n.rt, metrics.Options{ReadyAfterFailures: n.cfg.ReadyAfterFailures()}); err != nil {
		return err
	}
	if err := metrics.RegisterProcess(n.reg); err != nil {
		return err
	}
	if err := n.reg.Register(backlog); err != nil {
		return err
	}
	if err := n.reg.Register(metrics.NewVacuumCollector(MetricTables(n.passes))); err != nil {
		return err
	}
	if n.cluster != nil {
		return n.cluster.member.Register(n.reg)
	}
	return nil
}

// adminHandler is the admin API with the dashboard under /ui/ and the registry on
// /metrics. The dashboard is built from the finished admin config (in cluster mode,
// with the member as its cluster source), so both show the same cluster.
func (n *Node) adminHandler(backlog *metrics.BacklogCollector) error {
	acfg := admin.Config{Runtime: n.rt, Ledger: n.ledger, Token: n.cfg.Node.AdminToken, Gatherer: n.reg, ReadyAfterFailures: n.cfg.ReadyAfterFailures()}
	if n.cluster != nil {
		acfg.Cluster, acfg.QueueTriggers = n.cluster.member, n.ledger != nil
	}
	var plan *ledger.Plan // the cleanup as the dashboard shows it: with the ledger only
	if n.ledger != nil {
		plan = n.plan
	}
	dashboard, err := ui.New(ui.Config{
		Runtime: acfg.Runtime, Ledger: acfg.Ledger, Token: acfg.Token, Backlog: backlog, Cluster: acfg.Cluster,
		ReadyAfterFailures: acfg.ReadyAfterFailures, Cleanup: plan, CleanupDefaulted: n.cfg.MetadataCleanup.RetentionPeriod == nil,
		Redact: func(s string) string { return passes.RedactTextFor(n.cfg.Database.Driver, s, n.cfg.Database.DSN) },
	})
	if err != nil {
		return err
	}
	acfg.UI = dashboard
	n.admin = admin.New(acfg)
	return nil
}
