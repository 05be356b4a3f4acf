package node

import (
	"context"

	"github.com/sirupsen/logrus"
	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/node/config"
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
	if cfg.LedgerEnabled() && !o.NoLedger {
		t.Ledger, _ = ledger.New(db, cfg.LedgerPrefix())
		t.journal = t.Ledger.PartitionJournal()
	}
	warn := func(w string) {
		if log != nil {
			log.Warn(w)
		}
	}
	if t.Passes, err = tablePasses(cfg, db, t.Ledger, t.journal, warn); err != nil {
		_ = db.Close()
		return nil, badConfig(err)
	}
	if cfg.CleanupEnabled() {
		if t.Plan, err = cfg.CleanupPlan(); err != nil { // Validate checked it: a bug if so
			_ = db.Close()
			return nil, badConfig(err)
		}
	}
	return t, nil
}

// Close closes the database.
func (t *Tables) Close() error { return t.DB.Close() }
