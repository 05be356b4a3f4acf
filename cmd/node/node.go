package main

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
	rnode "github.com/retentionkit/retention/node"
	"github.com/retentionkit/retention/node/config"
	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/ledger"
)

// configError is bad configuration or usage: the command exits 2.
type configError struct{ err error }

func (e *configError) Error() string { return e.err.Error() }
func (e *configError) Unwrap() error { return e.err }

func badConfig(err error) error {
	if err == nil {
		return nil
	}
	return &configError{err}
}

// node is a loaded configuration with its database open.
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
	startup startupLimits
	// cluster is cluster mode's state once joined (joinCluster); nil outside it.
	cluster *clusterState
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
	existing := flags.existing
	cfg, err := config.LoadConfig(path)
	if err != nil {
		return nil, badConfig(err)
	}
	if err := cfg.Validate(); err != nil {
		return nil, badConfig(err)
	}
	openDB := passes.Open
	switch {
	case existing:
		openDB = passes.OpenExisting
	case cfg.Cluster.Enabled:
		// client-side keepalives too, so a member whose database went silent fails its
		// statements within seconds (Validate refused cluster mode on a driver without
		// session locks)
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
	if n.cluster != nil {
		n.cluster.close()
	}
	_ = n.db.Close()
}

// join makes this process a node of the ledger: a row with a fresh id, a heartbeat every
// ledger.DefaultHeartbeatInterval until close, and that id on every run it writes, so a
// node that dies leaves runs the others can close as abandoned.
func (n *node) join(ctx context.Context) error {
	if n.ledger == nil {
		return nil
	}
	self := ledger.NewNode(time.Now())
	if n.cluster != nil { // in cluster mode the ledger's node is the member
		self.ID = n.cluster.member.ID()
	}
	if err := n.ledger.Heartbeat(ctx, self, self.Started); err != nil {
		return err
	}
	n.ledger = n.ledger.ForNode(self.ID)
	hbCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	n.stopHeartbeat = stop
	go (&ledger.NodeHeartbeat{Ledger: n.ledger, Node: self, Reporter: actors.LogPollReporter{Logger: n.log, What: "node heartbeat"}}).Run(hbCtx)
	n.log.WithFields(logrus.Fields{"node": self.ID, "host": self.Host, "pid": self.PID}).Info("node joined the ledger")
	return nil
}

// migrate creates or upgrades the ledger tables, unless the ledger is off or
// `ledger.migrate: false` leaves that to the `migrate` command.
func (n *node) migrate(ctx context.Context) error {
	if n.ledger == nil || !n.cfg.LedgerMigrate() {
		return nil
	}
	m, err := ledger.MigrateTables(ctx, n.db, n.cfg.LedgerPrefix())
	if msg := "upgraded the ledger tables"; len(m.Applied) > 0 {
		if len(m.Created) > 0 {
			msg = "created the ledger tables in the database"
		}
		n.log.WithFields(logrus.Fields{"tables": strings.Join(m.Created, " "), "migrations": strings.Join(m.Applied, " ")}).Info(msg)
	}
	return err
}

// runtime builds the runtime with every pass of the configuration (those in only, when
// given), the ledger observer and the internal cleanups. With now, every pass sweeps as
// soon as it starts, with no stagger.
func (n *node) runtime(only []string, internal, now bool, observers ...actors.Observer) (*actors.Runtime, error) {
	var all []actors.Observer
	if n.ledger != nil {
		all = append(all, &actors.LedgerObserver{Ledger: n.ledger})
	}
	all = append(all, observers...)
	reporter := actors.LogFailureReporter{Logger: n.log, Redact: func(err error) string {
		return passes.RedactTextFor(n.cfg.Database.Driver, err.Error(), n.cfg.Database.DSN)
	}}
	rt := actors.New(n.clusterRuntime(actors.Config{Logger: n.log, MaxConcurrentDeletes: n.cfg.Node.MaxConcurrentDeletes, Observers: all, FailureReporter: reporter}))
	for _, r := range append(n.registrations(), n.helperRegistrations()...) {
		if len(only) > 0 && !slices.Contains(only, r.Name) {
			continue
		}
		if now {
			r.Options.MaxStartupStagger = 0
		}
		if err := rt.Register(r); err != nil {
			return nil, badConfig(err)
		}
	}
	var loops []passes.Registration
	if internal {
		var plan *ledger.Plan // nil: no cleanup
		if n.cfg.CleanupEnabled() {
			plan = n.plan // with the drain helpers' names in cluster mode (helperCleanup)
		}
		loops = rnode.LedgerLoops(n.ledger, plan, rt.PassNames(), func(w string) { n.log.Warn(w) })
	}
	for _, r := range loops { // the ledger's own loops are passes like any other: one member runs each
		r, err := n.exclusive(r)
		if err != nil {
			return nil, err
		}
		if err := rt.Register(r); err != nil {
			return nil, err
		}
	}
	return rt, nil
}
