package mysql

import (
	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes/driver"
)

// The ledger's indexed text on MySQL, which indexes no unbounded TEXT (errors
// 1071/1170). InnoDB's index key holds at most 3072 bytes and utf8mb4 takes up to four
// a character, so the quarantine's primary key (pass_name, row_key) must stay within
// 768 characters: 255 for a name, 512 for a row key. The collation is binary, as text
// compares on PostgreSQL and SQLite: under the server's default (case-insensitive)
// collation the keys ["a"] and ["A"] of two rows would be one quarantined row, and two
// setting keys differing in case one setting. (utf8mb4_bin still pads: a trailing space
// compares equal to none, which a row key, canonical JSON, never ends with.)
const (
	nameType   = "VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"
	rowKeyType = "VARCHAR(512) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"
)

// LedgerTypes numbers runs with an AUTO_INCREMENT bigint, stores instants as
// DATETIME(6) written in UTC (the session's time_zone is '+00:00'; TIMESTAMP would end
// in 2038), and bounds the text columns an index covers, as InnoDB needs. A longer pass
// name, node id or setting key, or a row key of more than 512 characters, is refused
// by the server (strict mode) instead of being cut.
func (Driver) LedgerTypes() driver.LedgerTypes {
	return driver.LedgerTypes{Identity: "BIGINT AUTO_INCREMENT PRIMARY KEY", Time: "DATETIME(6)", BigInt: "BIGINT",
		Name: nameType, RowKey: rowKeyType}
}

// LedgerIdent quotes name with backticks: MySQL reserves KEY, the settings table's key
// column, and a quoted name that is not reserved means the same column.
func (Driver) LedgerIdent(name string) string { return "`" + name + "`" }

// LedgerUpsert writes ON DUPLICATE KEY UPDATE c = VALUES(c) (MySQL has no ON CONFLICT;
// the key is whichever unique key the row collides on, so key is not written). VALUES()
// is what MariaDB knows; MySQL 8.0.20+ deprecates it for a row alias MariaDB lacks, but
// runs it. With set empty it updates the first key column to itself: the row stays and,
// since the driver asks for affected rows rather than found rows, counts as none.
// INSERT IGNORE would do nothing too, but it also turns other errors (a too-long value,
// a missing foreign key) into warnings. The upsert returns nothing: on MariaDB 10.5+ bun
// would add a RETURNING for the model's defaulted columns, which returns the row there
// even when nothing was inserted, so the count would say 1 where it is 0.
func (Driver) LedgerUpsert(q *bun.InsertQuery, key []string, set ...string) *bun.InsertQuery {
	q = q.On("DUPLICATE KEY UPDATE").Returning("")
	if len(set) == 0 {
		return q.Set("? = ?", bun.Ident(key[0]), bun.Ident(key[0]))
	}
	for _, c := range set {
		q = q.Set("? = VALUES(?)", bun.Ident(c), bun.Ident(c))
	}
	return q
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
