package node

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/sirupsen/logrus"
	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/node/admin"
	"github.com/retentionkit/retention/node/config"
	"github.com/retentionkit/retention/node/metrics"
	"github.com/retentionkit/retention/node/ui"
	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/ledger"
)

// Options are what an embedding program adds to a configuration file: its own Go
// passes and where the node logs. The zero value is a node of the file's passes only
// that logs nowhere.
type Options struct {
	// Passes are extra passes (GoPass for a passes.Pass written in Go) run beside the
	// file's table passes; their names must not repeat the file's.
	Passes []Pass
	// Logger receives the node's and protoactor's lines; nil discards them, because a
	// library should not write to its host's stderr unasked.
	Logger *logrus.Logger
	// System is an actor system of the host's for the passes to run in; nil makes one
	// that Stop shuts down.
	System *actor.ActorSystem
	// Observers hear every pass event after the node's metrics and ledger have, so a
	// host's observer sees a sweep the ledger already holds.
	Observers []actors.Observer
}

// Node is a retention node built from a configuration: its database, ledger, passes,
// runtime, metrics and admin handler. Open builds it, Start runs it, Stop stops the
// passes and Close releases what Open acquired.
type Node struct {
	cfg    *config.Config
	db     *bun.DB
	log    *logrus.Logger
	ledger *ledger.Ledger // nil when the file disables the ledger
	passes []Pass
	rt     *actors.Runtime
	reg    *prometheus.Registry
	admin  *admin.Handler
	// stopSampling ends the backlog sampler, which lives from Open to Close.
	stopSampling context.CancelFunc
	closed       bool
}

// Open validates cfg, opens its database and builds the node with cfg's table passes
// and opts' Go passes, ready to Start. On error nothing stays open.
func Open(ctx context.Context, cfg *config.Config, opts Options) (*Node, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	log := opts.Logger
	if log == nil {
		log = logrus.New()
		log.SetOutput(io.Discard)
	}
	db, err := passes.Open(ctx, cfg.Database.Driver, cfg.Database.DSN)
	if err != nil {
		return nil, fmt.Errorf("database %s: %s", passes.RedactDSNFor(cfg.Database.Driver, cfg.Database.DSN), passes.RedactTextFor(cfg.Database.Driver, err.Error(), cfg.Database.DSN))
	}
	n := &Node{cfg: cfg, db: db, log: log}
	if err := n.build(ctx, opts); err != nil {
		n.Close()
		return nil, err
	}
	return n, nil
}

// build makes the passes, the runtime, the metrics registry and the admin handler.
func (n *Node) build(ctx context.Context, opts Options) error {
	if n.cfg.LedgerEnabled() {
		n.ledger, _ = ledger.New(n.db, n.cfg.LedgerPrefix())
	}
	if err := n.tablePasses(); err != nil {
		return err
	}
	n.passes = append(n.passes, opts.Passes...)
	m := metrics.NewObserver()
	backlog := BacklogCollector(n.passes, n.ledger)
	sampling, stop := context.WithCancel(context.WithoutCancel(ctx))
	n.stopSampling = stop
	observers := []actors.Observer{m}
	if n.ledger != nil {
		observers = append(observers, &actors.LedgerObserver{Ledger: n.ledger})
	}
	observers = append(observers, opts.Observers...)
	observers = append(observers, backlog.SampleSweeps(sampling, 0, nil))
	if err := n.runtime(opts.System, observers); err != nil {
		return err
	}
	if err := n.registry(m, backlog); err != nil {
		return err
	}
	return n.adminHandler(backlog)
}

// tablePasses builds the configuration's table passes (see TablePasses).
func (n *Node) tablePasses() error {
	built, err := TablePasses(n.cfg, n.db, n.ledger, func(w string) { n.log.Warn(w) })
	n.passes = append(n.passes, built...)
	return err
}

// runtime registers every pass and, with a ledger, its run recovery and cleanups.
func (n *Node) runtime(system *actor.ActorSystem, observers []actors.Observer) error {
	reporter := actors.LogFailureReporter{Logger: n.log, Redact: func(err error) string {
		return passes.RedactTextFor(n.cfg.Database.Driver, err.Error(), n.cfg.Database.DSN)
	}}
	n.rt = actors.New(actors.Config{System: system, Logger: n.log, MaxConcurrentDeletes: n.cfg.Node.MaxConcurrentDeletes, Observers: observers, FailureReporter: reporter})
	for _, p := range n.passes {
		if err := n.rt.Register(p.Registration); err != nil {
			return err
		}
	}
	var plan *ledger.Plan
	if n.cfg.CleanupEnabled() {
		var err error
		if plan, err = n.cfg.CleanupPlan(); err != nil {
			return err
		}
	}
	return n.rt.Register(LedgerLoops(n.ledger, plan, n.rt.PassNames(), func(w string) { n.log.Warn(w) })...)
}

// registry is the node's own Prometheus registry, so a host's default registry is
// left alone: the passes' metrics, their tables' backlog and vacuum state, and the
// process collectors, as `retention run` serves them.
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
	return n.reg.Register(metrics.NewVacuumCollector(MetricTables(n.passes)))
}

// adminHandler is the admin API with the dashboard under /ui/ and the registry on
// /metrics.
func (n *Node) adminHandler(backlog *metrics.BacklogCollector) error {
	var plan *ledger.Plan
	if n.ledger != nil && n.cfg.CleanupEnabled() {
		plan, _ = n.cfg.CleanupPlan()
	}
	acfg := admin.Config{Runtime: n.rt, Ledger: n.ledger, Token: n.cfg.Node.AdminToken, Gatherer: n.reg, ReadyAfterFailures: n.cfg.ReadyAfterFailures()}
	dashboard, err := ui.New(ui.Config{
		Runtime: n.rt, Ledger: n.ledger, Token: acfg.Token, Backlog: backlog, ReadyAfterFailures: n.cfg.ReadyAfterFailures(),
		Cleanup: plan, CleanupDefaulted: n.cfg.MetadataCleanup.RetentionPeriod == nil,
		Redact: func(s string) string { return passes.RedactTextFor(n.cfg.Database.Driver, s, n.cfg.Database.DSN) },
	})
	if err != nil {
		return err
	}
	acfg.UI = dashboard
	n.admin = admin.New(acfg)
	return nil
}

// errClosed is what Start answers once Close has run.
var errClosed = errors.New("node: closed")
