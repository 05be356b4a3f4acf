package sqlite

import (
	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes/driver"
)

// LockCandidates leaves q as it is: SQLite has no row locks, and a writing transaction
// holds the database's write lock to its end.
func (Driver) LockCandidates(q *bun.SelectQuery) *bun.SelectQuery { return q }

// LockChildRows leaves q as it is, as LockCandidates does.
func (Driver) LockChildRows(q *bun.SelectQuery, _ string) *bun.SelectQuery { return q }

// SkipsLocked is false: without row locks nothing is passed over.
func (Driver) SkipsLocked() bool { return false }

// DeleteNext deletes the candidates by key in one statement, which takes the write lock
// for itself; RETURNING comes unordered, and the cursor orders the rows in Go (SQLite's
// default binary collation agrees with Go's comparison).
func (Driver) DeleteNext(db bun.IDB, n driver.DeleteNext) (string, bool) {
	q := db.NewDelete().TableExpr("?", n.Table).Where("? IN (?)", n.Key, n.Candidates).Returning("?", n.Returning)
	return q.String(), false
}

// LocksByKey is false: SQLite has no row locks to take over a range, so a batch
// without children stays one statement.
func (Driver) LocksByKey() bool { return false }

// DeleteKeys deletes the rows by an IN list of their keys; the transaction's write lock
// already covers them.
func (Driver) DeleteKeys(db bun.IDB, d driver.DeleteKeys) string {
	return db.NewDelete().TableExpr("?", d.Table).Where("? IN (?)", d.Match, d.In).String()
}
