package driver

import "github.com/uptrace/bun"

// Ledger is what differs by database in the run ledger (passes/ledger): the column types
// its migrations write, how a claim locks the rows it read, and how it lists its tables.
// Everything else of the ledger is SQL both databases share (ON CONFLICT upserts,
// RETURNING), so it is not here.
type Ledger interface {
	// LedgerTypes are the column types of the ledger's DDL.
	LedgerTypes() LedgerTypes
	// LedgerLock makes q, a SELECT inside a transaction, lock the rows it returns until
	// the transaction ends, so two nodes claiming work never take the same row; of names
	// the table alias to lock when q joins ("" for all), and skipLocked passes over rows
	// another transaction holds instead of waiting for them. A database whose write
	// transactions already exclude each other (SQLite's immediate transactions) returns q
	// as it is.
	LedgerLock(q *bun.SelectQuery, of string, skipLocked bool) *bun.SelectQuery
	// LedgerTablesQuery is a query with one text column: the names of the tables in the
	// schema the ledger lives in, which is how a prefix's tables are found and dropped.
	LedgerTablesQuery() string
}

// LedgerTypes are the column types of the ledger's DDL on one database.
type LedgerTypes struct {
	// Identity is an integer primary key the database numbers itself, whole definition
	// included ("... PRIMARY KEY").
	Identity string
	// Time is a column holding an instant (UTC).
	Time string
	// BigInt is a 64-bit integer column (counts, run ids).
	BigInt string
}
