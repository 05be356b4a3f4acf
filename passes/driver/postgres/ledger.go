package postgres

import (
	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes/driver"
)

// LedgerTypes numbers runs with a bigserial and stores instants as timestamptz.
func (Driver) LedgerTypes() driver.LedgerTypes {
	return driver.LedgerTypes{Identity: "BIGSERIAL PRIMARY KEY", Time: "TIMESTAMPTZ", BigInt: "BIGINT"}
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
