package ledger

import (
	"context"
	"strings"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
	"github.com/uptrace/bun/migrate"

	"github.com/retentionkit/retention/passes/driver"
)

// registerNodes adds the migration for crash recovery: a table of the nodes writing the
// ledger with their heartbeats, and the owning node of every run. (bun names the
// migration after this file.)
func registerNodes(m *migrate.Migrations, prefix string) {
	m.MustRegister(func(ctx context.Context, db *bun.DB) error {
		types, err := ledgerTypes(db)
		if err != nil {
			return err
		}
		return inTx(ctx, db, nodeStatements(prefix, types))
	}, func(ctx context.Context, db *bun.DB) error {
		// MySQL has no DROP INDEX without ON <table>, nor its IF EXISTS (MariaDB has);
		// ALTER TABLE ... DROP INDEX is what both spell alike.
		dropIndex := "DROP INDEX IF EXISTS " + prefix + "metadata_open"
		if db.Dialect().Name() == dialect.MySQL {
			dropIndex = "ALTER TABLE " + prefix + "metadata DROP INDEX " + prefix + "metadata_open"
		}
		return inTx(ctx, db, []string{
			dropIndex,
			"ALTER TABLE " + prefix + "metadata DROP COLUMN node_id",
			"DROP TABLE IF EXISTS " + prefix + "node",
		})
	})
}

// nodeStatements creates the node table and metadata.node_id. node_id is not a foreign
// key: a run outlives the row of the node that ran it, which recovery prunes.
func nodeStatements(p string, types driver.LedgerTypes) []string {
	ts, big := types.Time, types.BigInt
	r := strings.NewReplacer("{p}", p, "{ts}", ts, "{big}", big, "{name}", types.Name)
	stmts := []string{
		`CREATE TABLE {p}node (
			id {name} PRIMARY KEY,
			host TEXT NOT NULL,
			pid {big} NOT NULL,
			started_time {ts} NOT NULL,
			heartbeat_time {ts} NOT NULL)`,
		`ALTER TABLE {p}metadata ADD COLUMN node_id {name}`,
		`CREATE INDEX {p}metadata_open ON {p}metadata (state, node_id)`,
	}
	for i, s := range stmts {
		stmts[i] = r.Replace(s)
	}
	return stmts
}
