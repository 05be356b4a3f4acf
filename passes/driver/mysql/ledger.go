package mysql

import (
	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes/driver"
)

// LedgerTypes numbers runs with an AUTO_INCREMENT bigint and stores instants as
// DATETIME(6) written in UTC (the session's time_zone is '+00:00'); TIMESTAMP would
// end in 2038.
func (Driver) LedgerTypes() driver.LedgerTypes {
	return driver.LedgerTypes{Identity: "BIGINT AUTO_INCREMENT PRIMARY KEY", Time: "DATETIME(6)", BigInt: "BIGINT"}
}

// LedgerLock adds FOR UPDATE [SKIP LOCKED]: InnoDB runs transactions side by side, so a
// claim must lock the rows it read. MariaDB has no FOR UPDATE OF, so a join's rows are
// all locked; the ledger's joins read rows no other claim takes.
func (Driver) LedgerLock(q *bun.SelectQuery, _ string, skipLocked bool) *bun.SelectQuery {
	if skipLocked {
		return q.For("UPDATE SKIP LOCKED")
	}
	return q.For("UPDATE")
}

// LedgerTablesQuery lists the tables of the connection's database, where the ledger
// lives.
func (Driver) LedgerTablesQuery() string {
	return `SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE()`
}
