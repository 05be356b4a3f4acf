package sqlite

import (
	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes/driver"
)

// LedgerTypes numbers runs with an autoincrement rowid (never reusing a deleted run's
// id) and stores instants as text, which is how bun writes a time.Time to SQLite.
func (Driver) LedgerTypes() driver.LedgerTypes {
	return driver.LedgerTypes{Identity: "INTEGER PRIMARY KEY AUTOINCREMENT", Time: "TEXT", BigInt: "INTEGER", Name: "TEXT", RowKey: "TEXT"}
}

// LedgerIdent returns name as it is: SQLite accepts every one of the ledger's column
// names bare, and the DDL it already ran wrote them so.
func (Driver) LedgerIdent(name string) string { return name }

// LedgerUpsert writes ON CONFLICT (key) DO NOTHING or DO UPDATE SET c = EXCLUDED.c
// (SQLite 3.24+).
func (Driver) LedgerUpsert(q *bun.InsertQuery, key []string, set ...string) *bun.InsertQuery {
	return driver.OnConflict(q, key, set...)
}

// LedgerLock returns q as it is: SQLite has no row locks, and the immediate transaction
// the ledger runs in already holds the write lock, so no other claim runs meanwhile.
func (Driver) LedgerLock(q *bun.SelectQuery, _ string, _ bool) *bun.SelectQuery { return q }

// LedgerTablesQuery lists the tables of the main database.
func (Driver) LedgerTablesQuery() string {
	return `SELECT name FROM sqlite_master WHERE type = 'table'`
}
