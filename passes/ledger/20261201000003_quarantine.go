package ledger

import (
	"context"
	"strings"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/migrate"

	"github.com/retentionkit/retention/passes/driver"
)

// registerQuarantine adds the migration for the quarantine: one row per row of a swept
// table whose delete failed on its own, keyed by pass and row key. (bun names the
// migration after this file.)
func registerQuarantine(m *migrate.Migrations, prefix string) {
	m.MustRegister(func(ctx context.Context, db *bun.DB) error {
		types, err := ledgerTypes(db)
		if err != nil {
			return err
		}
		return inTx(ctx, db, quarantineStatements(prefix, types))
	}, func(ctx context.Context, db *bun.DB) error {
		return inTx(ctx, db, []string{"DROP TABLE IF EXISTS " + prefix + "quarantine"})
	})
}

// quarantineStatements creates the quarantine table. row_key is the key as
// passes.KeyText writes it (canonical JSON), so a composite key is one column; the
// primary key on (pass_name, row_key) is also what a sweep reads its pass's rows by.
func quarantineStatements(p string, types driver.LedgerTypes) []string {
	ts, big := types.Time, types.BigInt
	r := strings.NewReplacer("{p}", p, "{ts}", ts, "{big}", big, "{name}", types.Name, "{rowkey}", types.RowKey)
	return []string{r.Replace(`CREATE TABLE {p}quarantine (
			pass_name {name} NOT NULL,
			row_key {rowkey} NOT NULL,
			error TEXT NOT NULL,
			constraint_name TEXT,
			referencing_table TEXT,
			first_seen {ts} NOT NULL,
			last_seen {ts} NOT NULL,
			attempts {big} NOT NULL,
			next_attempt {ts} NOT NULL,
			PRIMARY KEY (pass_name, row_key))`)}
}
