package driver

import (
	"strings"

	"github.com/uptrace/bun"
)

// Ledger is what differs by database in the run ledger (passes/ledger): the column types
// its migrations write, how it spells a column name the database reserves, how it
// upserts, how a claim locks the rows it read, and how it lists its tables. Everything
// else of the ledger is SQL every database shares, so it is not here; the ledger never
// tests the dialect itself.
type Ledger interface {
	// LedgerTypes are the column types of the ledger's DDL.
	LedgerTypes() LedgerTypes
	// LedgerIdent is how the ledger's SQL spells the column name, which the database may
	// reserve (MySQL reserves KEY, the settings table's key column): the name as it is
	// where the database accepts it bare, so PostgreSQL's and SQLite's DDL stay as they
	// were, else the name quoted.
	LedgerIdent(name string) string
	// LedgerUpsert makes q, an INSERT, resolve a row whose key is already in the table
	// instead of failing: the columns of set take the values q tried to insert, or, when
	// set is empty, the row there stays as it is and counts as no row affected (which is
	// how the quarantine tells a new row from one it already held). key names the
	// columns of the key the rows collide on; a database that finds the key itself
	// (MySQL) ignores it.
	LedgerUpsert(q *bun.InsertQuery, key []string, set ...string) *bun.InsertQuery
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
	// Name is a text column an index or primary key covers (pass names, states, node
	// ids, setting keys). It is a separate type because MySQL indexes no unbounded text:
	// there it is a VARCHAR, where PostgreSQL and SQLite keep TEXT.
	Name string
	// RowKey is the quarantine's row_key column, a swept row's key as passes.KeyText
	// writes it, which the quarantine's primary key covers with the pass name; like Name
	// it is bounded where the database indexes no unbounded text.
	RowKey string
}

// OnConflict is LedgerUpsert as PostgreSQL and SQLite spell it: ON CONFLICT (key) DO
// NOTHING, or DO UPDATE SET c = EXCLUDED.c for each column of set. It is shared so the
// two drivers write the very same SQL the ledger wrote before upserts moved behind the
// driver.
func OnConflict(q *bun.InsertQuery, key []string, set ...string) *bun.InsertQuery {
	target := "CONFLICT (" + strings.Join(key, ", ") + ")"
	if len(set) == 0 {
		return q.On(target + " DO NOTHING")
	}
	q = q.On(target + " DO UPDATE")
	for _, c := range set {
		q = q.Set(c + " = EXCLUDED." + c)
	}
	return q
}
