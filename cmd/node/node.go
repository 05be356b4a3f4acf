package main

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/sirupsen/logrus"
	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/actors"
	rnode "github.com/retentionkit/retention/node"
	"github.com/retentionkit/retention/node/config"
	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/ledger"
)

// configError is bad configuration or usage: the command exits 2. It is the library's
// node.ConfigError, so `run` (which opens a node.Node) and the one-off commands (which
// open a node below) exit alike.
type configError = rnode.ConfigError

func badConfig(err error) error {
	if err == nil {
		return nil
	}
	return &configError{Err: err}
}

// node is a loaded configuration with its database open, for the one-off commands
// (validate, sweep, status and the ledger's commands); `run` opens a node.Node instead.
type node struct {
	cfg    *config.Config
	db     *bun.DB
	log    *logrus.Logger
	ledger *ledger.Ledger // nil when the ledger is disabled
	// passes are the node's passes, one record each (registration and table together).
	passes []rnode.Pass
	plan   *ledger.Plan
	// stopHeartbeat ends the node's heartbeat (see join); nil until then.
	stopHeartbeat context.CancelFunc
	// startup overrides the startup checks' retry bounds; zero takes the defaults.
	startup rnode.StartupOptions
}

// openNode loads and validates the configuration and opens its database; with existing,
// it never creates one (see passes.OpenExisting).
func openNode(ctx context.Context, path string, log *logrus.Logger, existing bool) (*node, error) {
	return openNodeWith(ctx, path, log, openFlags{existing: existing})
}

// openFlags say how a command opens the node, beyond what the file says.
type openFlags struct {
	existing bool // never create the database (validate)
	noLedger bool // leave the ledger out whatever the file says (sweep --no-ledger)
}

// openNodeWith is openNode with every flag. Without the ledger nothing is recorded and
// nothing quarantined: a one-off run touches no table but the passes' own.
func openNodeWith(ctx context.Context, path string, log *logrus.Logger, flags openFlags) (*node, error) {
	cfg, err := config.LoadConfig(path)
	if err != nil {
		return nil, badConfig(err)
	}
	if err := cfg.Validate(); err != nil {
		return nil, badConfig(err)
	}
	openDB := passes.Open
	switch {
	case flags.existing:
		openDB = passes.OpenExisting
	case cfg.Cluster.Enabled:
		// client-side keepalives too, as a member's (node.Open), so a sweep of a
		// cluster's passes whose database went silent fails its statements within seconds
		openDB = func(ctx context.Context, driver, dsn string) (*bun.DB, error) {
			return passes.OpenWith(ctx, driver, dsn, passes.OpenOptions{Cluster: &passes.SweepConnOptions{}})
		}
	}
	db, err := openDB(ctx, cfg.Database.Driver, cfg.Database.DSN)
	if err != nil {
		shown := fmt.Errorf("database %s: %s", passes.RedactDSNFor(cfg.Database.Driver, cfg.Database.DSN), passes.RedactTextFor(cfg.Database.Driver, err.Error(), cfg.Database.DSN))
		if errors.Is(err, passes.ErrBadDSN) {
			return nil, badConfig(shown)
		}
		return nil, shown
	}
	n := &node{cfg: cfg, db: db, log: log}
	if cfg.LedgerEnabled() && !flags.noLedger {
		n.ledger, _ = ledger.New(db, cfg.LedgerPrefix())
	}
	if n.passes, err = rnode.TablePasses(cfg, db, n.ledger, func(w string) { log.Warn(w) }); err != nil {
		db.Close()
		return nil, badConfig(err)
	}
	n.plan, _ = cfg.CleanupPlan()
	return n, nil
}

// registrations are the passes' registrations, a fresh slice the caller may change.
func (n *node) registrations() []passes.Registration {
	regs := make([]passes.Registration, len(n.passes))
	for i, p := range n.passes {
		regs[i] = p.Registration
	}
	return regs
}

func (n *node) close() {
	if n.stopHeartbeat != nil {
		n.stopHeartbeat()
	}
	_ = n.db.Close()
}

// join makes this one-off command a node of the ledger (node.JoinLedger) until close,
// so the runs it writes carry a node whose heartbeat says whether it is alive.
func (n *node) join(ctx context.Context) error {
	if n.ledger == nil {
		return nil
	}
	joined, stop, err := rnode.JoinLedger(ctx, n.log, n.ledger, "")
	if err != nil {
		return err
	}
	n.ledger, n.stopHeartbeat = joined, stop
	return nil
}

// migrate creates or upgrades the ledger tables (node.MigrateLedger), unless the ledger
// is off or `ledger.migrate: false` leaves that to the `migrate` command.
func (n *node) migrate(ctx context.Context) error {
	if n.ledger == nil {
		return nil
	}
	return rnode.MigrateLedger(ctx, n.log, n.db, n.cfg)
}

// startupValidate runs the startup checks as a node does (node.CheckStartup): a
// configuration error exits 2, a database that never answered exits 1.
func (n *node) startupValidate(ctx context.Context) error {
	var plan *ledger.Plan
	if n.cfg.CleanupEnabled() {
		plan = n.plan
	}
	return rnode.CheckStartup(ctx, n.log, n.passes, plan, n.startup)
}

// runtime builds the runtime of a one-off sweep with the passes in only (every pass
// when empty) and the ledger observer, each sweeping as soon as it starts, with no
// stagger. It runs none of the ledger's own loops: a running node does.
func (n *node) runtime(only []string, observers ...actors.Observer) (*actors.Runtime, error) {
	var all []actors.Observer
	if n.ledger != nil {
		all = append(all, &actors.LedgerObserver{Ledger: n.ledger})
	}
	all = append(all, observers...)
	reporter := actors.LogFailureReporter{Logger: n.log, Redact: func(err error) string {
		return passes.RedactTextFor(n.cfg.Database.Driver, err.Error(), n.cfg.Database.DSN)
	}}
	rt := actors.New(actors.Config{Logger: n.log, MaxConcurrentDeletes: n.cfg.Node.MaxConcurrentDeletes, Observers: all, FailureReporter: reporter})
	for _, r := range n.registrations() {
		if len(only) > 0 && !slices.Contains(only, r.Name) {
			continue
		}
		r.Options.MaxStartupStagger = 0
		if err := rt.Register(r); err != nil {
			return nil, badConfig(err)
		}
	}
	return rt, nil
}
