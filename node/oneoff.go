package node

import (
	"context"

	"github.com/sirupsen/logrus"
	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/node/config"
	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/ledger"
)

// TablesOptions say how OpenTables opens a configuration's parts. The zero value opens
// the database as a node does (creating a SQLite file that does not exist), with the
// ledger if the file enables it, warning nowhere.
type TablesOptions struct {
	// Existing never creates the database, as DatabaseOptions.Existing (`retention
	// validate`); false (the default) may create it.
	Existing bool
	// NoLedger leaves the ledger out whatever the file says, as SweepOptions.NoLedger;
	// false (the default) uses it when the file enables it.
	NoLedger bool
	// NoReplicas leaves database.replicas unopened, for a command that paces nothing
	// (status, the ledger's); false (the default) opens and checks each (OpenReplicas).
	NoReplicas bool
	// Logger receives the passes' configuration warnings; nil discards them.
	Logger *logrus.Logger
}

// Tables are a configuration's database, ledger and table passes, opened without a
// node, for a one-off command (`validate`, `sweep --dry-run`, `status`, the ledger's
// commands) or a program that measures or checks passes without running them, so each
// builds them as a node does rather than by hand. Close releases the database.
type Tables struct {
	// DB is the open database.
	DB *bun.DB
	// Ledger is the file's ledger; nil when the file disables it or NoLedger is set.
	Ledger *ledger.Ledger
	// Passes are the file's table passes, with the ledger's quarantine when there is one.
	Passes []Pass
	// Plan is the metadata cleanup's plan when the file enables the cleanup; nil when not.
	Plan *ledger.Plan
	// Replicas are the open replicas of database.replicas, whose lag paces the
	// adaptive passes; Close closes them.
	Replicas []passes.Replica
	// journal is the partition journal of Passes (nil without a ledger), kept so that
	// Open can name the node in it once the node joined the ledger.
	journal *ledger.PartitionJournal
}

// OpenTables validates cfg, opens its database (OpenDatabase) and builds its ledger and
// table passes (TablePasses). A configuration found wrong is a *ConfigError; on error
// nothing stays open.
func OpenTables(ctx context.Context, cfg *config.Config, o TablesOptions) (*Tables, error) {
	if err := cfg.Validate(); err != nil {
		return nil, badConfig(err)
	}
	log := o.Logger
	db, err := OpenDatabase(ctx, cfg, DatabaseOptions{Existing: o.Existing})
	if err != nil {
		return nil, err
	}
	t := &Tables{DB: db}
	if !o.NoReplicas {
		if t.Replicas, err = OpenReplicas(ctx, cfg); err != nil {
			_ = db.Close()
			return nil, err
		}
	}
	if cfg.LedgerEnabled() && !o.NoLedger {
		t.Ledger, _ = ledger.New(db, cfg.LedgerPrefix())
		t.journal = t.Ledger.PartitionJournal()
	}
	warn := func(w string) {
		if log != nil {
			log.Warn(w)
		}
	}
	if t.Passes, err = tablePasses(cfg, db, t.Ledger, t.journal, t.Replicas, warn); err != nil {
		_ = t.Close()
		return nil, badConfig(err)
	}
	if len(t.Replicas) > 0 && !anyAdaptive(t.Passes) {
		// Only where they were opened: a command that opens none paces nothing.
		warn("database.replicas: no pass is paced adaptive, and only an adaptive pass reads its replicas' lag; " +
			"set pacing: adaptive on a pass (or node.pacing), or the replicas are asked nothing")
	}
	if cfg.CleanupEnabled() {
		if t.Plan, err = cfg.CleanupPlan(); err != nil { // Validate checked it: a bug if so
			_ = t.Close()
			return nil, badConfig(err)
		}
	}
	return t, nil
}

// anyAdaptive reports whether a pass is paced adaptive by its options.
func anyAdaptive(ps []Pass) bool {
	for _, p := range ps {
		if p.Registration.Options.Pacing == passes.PacingAdaptive {
			return true
		}
	}
	return false
}

// Close closes the database and the replicas.
func (t *Tables) Close() error {
	for _, r := range t.Replicas {
		_ = r.DB.Close()
	}
	return t.DB.Close()
}
