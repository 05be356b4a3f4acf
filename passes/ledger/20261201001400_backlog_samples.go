package ledger

import (
	"context"
	"strings"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/migrate"

	"github.com/retentionkit/retention/passes/driver"
)

// registerBacklogSamples adds the migration for the backlog history: what the backlog
// measurement found per pass, now and then, so the dashboard can draw the backlog over
// time. (bun names the migration after this file.)
func registerBacklogSamples(m *migrate.Migrations, prefix string) {
	m.MustRegister(func(ctx context.Context, db *bun.DB) error {
		types, err := ledgerTypes(db)
		if err != nil {
			return err
		}
		return inTx(ctx, db, backlogStatements(prefix, types))
	}, func(ctx context.Context, db *bun.DB) error {
		return inTx(ctx, db, []string{"DROP TABLE IF EXISTS " + prefix + "backlog_sample"})
	})
}

func backlogStatements(p string, types driver.LedgerTypes) []string {
	ts, big := types.Time, types.BigInt
	r := strings.NewReplacer("{p}", p, "{ts}", ts, "{big}", big, "{name}", types.Name)
	return []string{
		r.Replace(`CREATE TABLE {p}backlog_sample (
			pass_name {name} NOT NULL,
			at {ts} NOT NULL,
			backlog_rows {big} NOT NULL,
			held_rows {big} NOT NULL,
			PRIMARY KEY (pass_name, at))`),
		r.Replace(`CREATE INDEX {p}backlog_sample_at ON {p}backlog_sample (at)`),
	}
}
