package ledger

import (
	"context"
	"fmt"
	"regexp"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/migrate"
)

// DefaultPrefix is the table prefix when none is configured.
const DefaultPrefix = "retention_"

var prefixPattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,30}$`)

// CheckPrefix returns an error when prefix cannot start a table name. It names the field
// as the configuration spells it.
func CheckPrefix(prefix string) error {
	if !prefixPattern.MatchString(prefix) {
		return fmt.Errorf("ledger.table_prefix %q: want letters, digits and _, starting with a letter or _, at most 31 characters", prefix)
	}
	return nil
}

// Migrations returns the ledger's migrations for a table prefix.
func Migrations(prefix string) *migrate.Migrations {
	m := migrate.NewMigrations()
	registerTables(m, prefix)
	registerNodes(m, prefix)
	registerQuarantine(m, prefix)
	registerBacklogSamples(m, prefix)
	registerPartitionRetirements(m, prefix)
	return m
}

// Migrate creates or upgrades the ledger tables under prefix and reports the
// migrations it applied. It is safe to run on every start: applied migrations are
// recorded in <prefix>migrations and run once.
func Migrate(ctx context.Context, db *bun.DB, prefix string) ([]string, error) {
	if err := CheckPrefix(prefix); err != nil {
		return nil, err
	}
	migrator := migrate.NewMigrator(db, Migrations(prefix),
		migrate.WithTableName(prefix+"migrations"), migrate.WithLocksTableName(prefix+"migration_locks"),
		migrate.WithMarkAppliedOnSuccess(true))
	if err := initTables(ctx, migrator); err != nil {
		return nil, fmt.Errorf("ledger: init migrations: %w", err)
	}
	if err := lock(ctx, migrator); err != nil {
		return nil, err
	}
	defer func() { _ = migrator.Unlock(context.WithoutCancel(ctx)) }()
	group, err := migrator.Migrate(ctx)
	if err != nil {
		return nil, fmt.Errorf("ledger: migrate: %w", err)
	}
	var applied []string
	for _, m := range group.Migrations {
		applied = append(applied, m.String())
	}
	return applied, nil
}

// lockAttempts and lockWait bound how long a node waits for another node's migration.
const (
	lockAttempts = 40
	lockWait     = 250 * time.Millisecond
)

// lock takes the migration lock, waiting while another node holds it (bun's lock fails
// at once instead of waiting), so nodes starting together migrate one after the other.
func lock(ctx context.Context, m *migrate.Migrator) error {
	var err error
	for range lockAttempts {
		if err = m.Lock(ctx); err == nil {
			return nil
		}
		t := time.NewTimer(lockWait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
	return fmt.Errorf("ledger: another node holds the migration lock: %w", err)
}

// initTables creates bun's bookkeeping tables. Two nodes creating them at the same
// moment can collide in PostgreSQL's catalog even with IF NOT EXISTS; the loser's retry
// finds them there.
func initTables(ctx context.Context, m *migrate.Migrator) error {
	var err error
	for range 3 {
		if err = m.Init(ctx); err == nil || ctx.Err() != nil {
			return err
		}
	}
	return err
}
