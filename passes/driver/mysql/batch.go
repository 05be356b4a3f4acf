package mysql

import (
	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes/driver"
)

// LockCandidates locks the rows and skips those another transaction holds, so two
// sweepers take disjoint rows. The sweep only hands it a re-check by key (LocksByKey),
// so InnoDB takes record locks on those keys and no gap locks over a range.
func (Driver) LockCandidates(q *bun.SelectQuery) *bun.SelectQuery {
	return q.For("UPDATE SKIP LOCKED")
}

// LockChildRows locks the joined rows and skips those another transaction holds.
// MariaDB has no FOR UPDATE OF, so the joined parents are locked too; they are the
// batch's own rows (already locked by it) or their children's ancestors, and skipping one
// of those held elsewhere only passes its parent over, which is the safe side.
func (Driver) LockChildRows(q *bun.SelectQuery, _ string) *bun.SelectQuery {
	return q.For("UPDATE SKIP LOCKED")
}

// SkipsLocked is true: SKIP LOCKED passes rows over (MySQL 8.0, MariaDB 10.6).
func (Driver) SkipsLocked() bool { return true }

// LocksByKey is true: a locking read over a range of the timestamp index takes next-key
// locks on every index record it scans (at REPEATABLE READ, gaps too), blocking the
// application's inserts; reading the candidates without locks and then locking them by
// key equality takes record locks on the batch's rows alone. MySQL also has no
// DELETE ... RETURNING, and MariaDB's refuses a LIMIT subquery on the same table.
func (Driver) LocksByKey() bool { return true }

// DeleteNext is never called, since LocksByKey is true. It returns a statement that
// fails (an unknown function), so a caller that ignored LocksByKey fails loudly instead
// of deleting by a range.
func (Driver) DeleteNext(bun.IDB, driver.DeleteNext) (string, bool) {
	return "SELECT retention_mysql_deletes_by_key_only()", false
}
