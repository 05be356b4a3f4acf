package main

import (
	"context"

	"github.com/sirupsen/logrus"

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
	tables *rnode.Tables // the database (tables.DB) and the replicas; close closes them
	log    *logrus.Logger
	ledger *ledger.Ledger // nil when the ledger is disabled
	// passes are the node's passes, one record each (registration and table together).
	passes []rnode.Pass
	plan   *ledger.Plan // the metadata cleanup's; nil when the file turns it off
	// startup overrides the startup checks' retry bounds; zero takes the defaults.
	startup rnode.StartupOptions
}

// openNode loads and validates the configuration and opens its database; with existing,
// it never creates one (see passes.OpenExisting), and it opens and checks the replicas
// database.replicas lists (validate): the other one-off commands pace nothing, and a
// replica down for maintenance must not keep them from the ledger.
func openNode(ctx context.Context, path string, log *logrus.Logger, existing bool) (*node, error) {
	cfg, err := loadConfig(path)
	if err != nil {
		return nil, err
	}
	t, err := rnode.OpenTables(ctx, cfg, rnode.TablesOptions{Existing: existing, NoReplicas: !existing, Logger: log})
	if err != nil {
		return nil, err
	}
	return &node{cfg: cfg, tables: t, log: log, ledger: t.Ledger, passes: t.Passes, plan: t.Plan}, nil
}

// loadConfig loads and validates the configuration at path; either failing is a
// configuration error (exit 2).
func loadConfig(path string) (*config.Config, error) {
	cfg, err := config.LoadConfig(path)
	if err != nil {
		return nil, badConfig(err)
	}
	if err := cfg.Validate(); err != nil {
		return nil, badConfig(err)
	}
	return cfg, nil
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
	_ = n.tables.Close()
}

// startupValidate runs the startup checks as a node does (node.CheckStartup): a
// configuration error exits 2, a database that never answered exits 1.
func (n *node) startupValidate(ctx context.Context) error {
	return rnode.CheckStartup(ctx, n.log, n.passes, n.plan, n.startup)
}
