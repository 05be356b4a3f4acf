package ledger

import (
	"context"
	"fmt"
	"strings"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/migrate"

	"github.com/retentionkit/retention/passes/driver"
)

// registerTables adds the migration that creates the ledger tables. bun names a Go
// migration after the file that registers it, which is why this file's name is a
// version.
func registerTables(m *migrate.Migrations, prefix string) {
	m.MustRegister(func(ctx context.Context, db *bun.DB) error {
		d, err := driverOf(db)
		if err != nil {
			return err
		}
		return inTx(ctx, db, tableStatements(prefix, d.LedgerTypes(), d.LedgerIdent))
	}, func(ctx context.Context, db *bun.DB) error {
		var drops []string
		for _, t := range []string{"settings", "dead_letter", "work_queue", "log", "metadata"} {
			drops = append(drops, "DROP TABLE IF EXISTS "+prefix+t)
		}
		return inTx(ctx, db, drops)
	})
}

// tableStatements writes the ledger's tables in the database's types; ident spells the
// settings table's key column, which MySQL reserves. Indexed text is {name} (TEXT but on
// MySQL), so PostgreSQL and SQLite still run the very statements they always ran.
func tableStatements(p string, types driver.LedgerTypes, ident func(string) string) []string {
	id, ts, big := types.Identity, types.Time, types.BigInt
	r := strings.NewReplacer("{p}", p, "{id}", id, "{ts}", ts, "{big}", big, "{name}", types.Name, "{key}", ident("key"))
	stmts := []string{
		`CREATE TABLE {p}metadata (
			id {id},
			name {name} NOT NULL,
			state {name} NOT NULL,
			start_time {ts} NOT NULL,
			end_time {ts},
			cutoff {ts},
			rows_deleted {big} NOT NULL DEFAULT 0,
			rows_skipped {big} NOT NULL DEFAULT 0,
			batches {big} NOT NULL DEFAULT 0,
			stop_reason TEXT,
			error TEXT,
			parent_id {big} REFERENCES {p}metadata (id) ON DELETE RESTRICT)`,
		`CREATE INDEX {p}metadata_name_start ON {p}metadata (name, start_time)`,
		`CREATE INDEX {p}metadata_parent ON {p}metadata (parent_id)`,
		`CREATE TABLE {p}log (
			id {id},
			metadata_id {big} NOT NULL REFERENCES {p}metadata (id) ON DELETE RESTRICT,
			level TEXT NOT NULL,
			time {ts} NOT NULL,
			message TEXT NOT NULL,
			row_key TEXT)`,
		`CREATE INDEX {p}log_metadata ON {p}log (metadata_id)`,
		`CREATE TABLE {p}work_queue (
			id {id},
			pass_name TEXT NOT NULL,
			requested_time {ts} NOT NULL,
			state {name} NOT NULL,
			metadata_id {big} REFERENCES {p}metadata (id) ON DELETE RESTRICT)`,
		`CREATE INDEX {p}work_queue_metadata ON {p}work_queue (metadata_id)`,
		`CREATE INDEX {p}work_queue_state ON {p}work_queue (state, requested_time)`,
		`CREATE TABLE {p}dead_letter (
			id {id},
			pass_name TEXT NOT NULL,
			error TEXT NOT NULL,
			created_time {ts} NOT NULL,
			metadata_id {big} REFERENCES {p}metadata (id) ON DELETE RESTRICT,
			retry_metadata_id {big} REFERENCES {p}metadata (id) ON DELETE RESTRICT,
			resolved_time {ts})`,
		`CREATE INDEX {p}dead_letter_metadata ON {p}dead_letter (metadata_id)`,
		`CREATE INDEX {p}dead_letter_retry ON {p}dead_letter (retry_metadata_id)`,
		`CREATE TABLE {p}settings (
			{key} {name} PRIMARY KEY,
			value TEXT NOT NULL,
			updated_time {ts} NOT NULL)`,
	}
	for i, s := range stmts {
		stmts[i] = r.Replace(s)
	}
	return stmts
}

// inTx runs the statements in one transaction, so on PostgreSQL and SQLite, whose DDL is
// transactional, a migration that fails half-way leaves nothing behind to trip over on
// the next try. MySQL commits each DDL statement on its own: there a migration that
// fails half-way leaves the tables it made, and is finished by hand.
func inTx(ctx context.Context, db *bun.DB, stmts []string) error {
	return db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		for _, s := range stmts {
			if _, err := tx.ExecContext(ctx, s); err != nil {
				return fmt.Errorf("%s: %w", firstLine(s), err)
			}
		}
		return nil
	})
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return strings.TrimSpace(line)
}
