package driver

import (
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/schema"
)

// Batch is the SQL shape of a batch where databases differ: how candidates are locked
// when they are re-checked, and the one-statement delete of a batch without children.
// The reference behaviour is PostgreSQL's: a locked re-check skips the rows another
// transaction holds (FOR UPDATE SKIP LOCKED) instead of waiting for them, so two
// sweepers take disjoint rows.
type Batch interface {
	// LockCandidates makes q (a re-check of candidate rows of the swept table) lock the
	// rows it returns and pass over those another transaction holds. A database without
	// row locks returns q as it is: its write lock covers the whole transaction.
	LockCandidates(q *bun.SelectQuery) *bun.SelectQuery
	// LockChildRows is LockCandidates for a child table's rows read under alias in a
	// join, locking only that table's rows.
	LockChildRows(q *bun.SelectQuery, alias string) *bun.SelectQuery
	// SkipsLocked reports whether a locked re-check can pass rows over. When it does, a
	// sweep must look for the rows it passed over (held children, skipped candidates)
	// before it reports it is done; when it cannot, nothing is ever passed over.
	SkipsLocked() bool
	// LocksByKey reports whether a batch must read its candidates without locks and then
	// lock them by key equality in a transaction, never lock while reading a range: on a
	// database whose locking reads lock every index record they scan (InnoDB's next-key
	// locks), a locked range read would block the application's writes across the range.
	// A driver that says so always takes the in-transaction path (the one of tables with
	// children), and its DeleteNext is never called.
	LocksByKey() bool
	// DeleteNext is the query that deletes the rows d.Candidates selects in one
	// statement and returns their keys and timestamps; ordered reports whether the rows
	// come back in (timestamp, key) order, so the cursor may take the last one.
	DeleteNext(db bun.IDB, d DeleteNext) (query string, ordered bool)
	// DeleteKeys is the one statement that deletes the rows of d.Table whose columns
	// d.Columns equal one of d.Keys, in the transaction that already locked them: a
	// batch's own rows (after their children), and a direct child's rows under the
	// batch's keys. The reference shape is an IN list of the keys; a LocksByKey driver
	// may use another one so every row is found by key equality and no other row is
	// locked.
	DeleteKeys(db bun.IDB, d DeleteKeys) string
}

// DeleteKeys is what a driver needs to shape the delete of a transaction's locked rows
// by key.
type DeleteKeys struct {
	// Table is the table the rows are deleted from.
	Table schema.QueryAppender
	// Columns are the columns compared with the keys, each qualified by Table, in the
	// keys' order; Match is the same columns unqualified, as one value (the column
	// itself, or the row value (a, b)).
	Columns []schema.QueryAppender
	Match   schema.QueryAppender
	// Keys are the keys, one value per column each; there is at least one. In writes
	// them as the list an IN compares Match with.
	Keys [][]any
	In   schema.QueryAppender
}

// DeleteNext is what a driver needs to shape a batch's one-statement delete.
type DeleteNext struct {
	// Table is the swept table.
	Table schema.QueryAppender
	// Key is the key's columns qualified by the table, as a tuple, and OneKey the only
	// key column when the key has one (nil otherwise), for a shape that finds rows
	// through the key's index.
	Key, OneKey schema.QueryAppender
	// Candidates selects the key columns of the next rows, in order, with their limit.
	Candidates *bun.SelectQuery
	// Stamp is set when the key has several columns and one of them is the pass's
	// timestamp (nil otherwise). A condition on the timestamp beside the key's is then
	// implied by the key's equality, so it never changes which rows go, and it lets a
	// driver's planner prune the partitions of a table partitioned by the timestamp (a
	// partitioned table's key must hold its partition column) and reach the rows through
	// the timestamp's index, instead of joining the candidates to a scan of every
	// partition (issue 25).
	Stamp *KeyStamp
	// Returning lists the key columns then the timestamp, unqualified; the rows are
	// scanned in that order. A key that holds the timestamp names it twice.
	Returning schema.QueryAppender
	// Order is the (timestamp, key) order the cursor follows, as positions from 1 of
	// Returning's columns, each column once: "2, 1" for key id, "3, 1, 2" for key
	// (tenant, id), "3, 2" for key (at, id) with timestamp at. By name, a timestamp that
	// is also a key column would be ambiguous in the result (SQLSTATE 42702).
	Order schema.QueryAppender
}

// KeyStamp names the timestamp column of a several-column key that holds it, for a
// condition on the timestamp implied by the key's equality (DeleteNext.Stamp).
type KeyStamp struct {
	// Column is the timestamp column qualified by the swept table.
	Column schema.QueryAppender
	// Name is the timestamp column unqualified, as the candidates' result names it.
	Name schema.QueryAppender
	// Key is the key's columns unqualified, as a list in the key's order, as the
	// candidates' result names them.
	Key schema.QueryAppender
}
