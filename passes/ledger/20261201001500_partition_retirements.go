package ledger

import (
	"context"
	"strings"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/migrate"

	"github.com/retentionkit/retention/passes/driver"
)

// registerPartitionRetirements adds the migration for the partition journal: one row per
// partition retirement a table pass with partitions: began, written before the detach.
// (bun names the migration after this file.)
func registerPartitionRetirements(m *migrate.Migrations, prefix string) {
	m.MustRegister(func(ctx context.Context, db *bun.DB) error {
		types, err := ledgerTypes(db)
		if err != nil {
			return err
		}
		return inTx(ctx, db, partitionRetirementStatements(prefix, types))
	}, func(ctx context.Context, db *bun.DB) error {
		return inTx(ctx, db, []string{"DROP TABLE IF EXISTS " + prefix + "partition_retirements"})
	})
}

// partitionRetirementStatements creates the journal's table. The bounds are the
// catalog's text (they can be of any range type); estimated_rows is the planner's
// estimate, never a count, and says so in its name. The index serves a listing by pass,
// newest first.
func partitionRetirementStatements(p string, types driver.LedgerTypes) []string {
	r := strings.NewReplacer("{p}", p, "{id}", types.Identity, "{ts}", types.Time, "{big}", types.BigInt, "{name}", types.Name)
	return []string{
		r.Replace(`CREATE TABLE {p}partition_retirements (
			id {id},
			pass_name {name} NOT NULL,
			node_id TEXT,
			partition_name TEXT NOT NULL,
			lower_bound TEXT NOT NULL,
			upper_bound TEXT NOT NULL,
			estimated_rows {big} NOT NULL,
			retire_mode TEXT NOT NULL,
			cutoff {ts} NOT NULL,
			started_at {ts} NOT NULL,
			outcome TEXT NOT NULL,
			reason TEXT,
			settled_at {ts})`),
		r.Replace(`CREATE INDEX {p}partition_retirements_pass ON {p}partition_retirements (pass_name, started_at)`),
	}
}
