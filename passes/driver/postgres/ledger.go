package postgres

import (
	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes/driver"
)

// LedgerTypes numbers runs with a bigserial and stores instants as timestamptz.
func (Driver) LedgerTypes() driver.LedgerTypes {
	return driver.LedgerTypes{Identity: "BIGSERIAL PRIMARY KEY", Time: "TIMESTAMPTZ", BigInt: "BIGINT", Name: "TEXT", RowKey: "TEXT"}
}

// LedgerIdent returns name as it is: PostgreSQL reserves none of the ledger's column
// names, and the DDL it already ran wrote them bare.
func (Driver) LedgerIdent(name string) string { return name }

// LedgerUpsert writes ON CONFLICT (key) DO NOTHING or DO UPDATE SET c = EXCLUDED.c.
func (Driver) LedgerUpsert(q *bun.InsertQuery, key []string, set ...string) *bun.InsertQuery {
	return driver.OnConflict(q, key, set...)
}

// LedgerLock adds FOR UPDATE [OF of] [SKIP LOCKED]: PostgreSQL runs transactions side by
// side, so a claim must lock the rows it read.
func (Driver) LedgerLock(q *bun.SelectQuery, of string, skipLocked bool) *bun.SelectQuery {
	clause := "UPDATE"
	if of != "" {
		clause += " OF " + of
	}
	if skipLocked {
		clause += " SKIP LOCKED"
	}
	return q.For(clause)
}

// LedgerTablesQuery lists the tables of the current schema, where the ledger lives.
func (Driver) LedgerTablesQuery() string {
	return `SELECT tablename FROM pg_catalog.pg_tables WHERE schemaname = current_schema()`
}
