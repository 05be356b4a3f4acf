package mysql

import (
	"fmt"
	"strings"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/schema"

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

// DeleteKeys deletes the rows by a join from a derived table of the keys, read first
// (STRAIGHT_JOIN), so InnoDB finds each row by key equality: it locks every row a
// DELETE's plan scans, and for an IN list over a few rows of a small table its optimizer
// picks a full scan, which waits on rows other transactions hold. One statement a batch,
// not one a key.
func (Driver) DeleteKeys(db bun.IDB, d driver.DeleteKeys) string {
	return db.NewRaw("DELETE ? FROM (?) AS rtn_batch_keys STRAIGHT_JOIN ? ON ?",
		d.Table, keysTable(len(d.Columns), d.Keys), d.Table, keyJoinOn(d.Columns)).String()
}

// keysTable is a derived table of keys, one row a key, columns k0..kn-1 (named in the
// first row).
func keysTable(n int, keys [][]any) schema.QueryAppender {
	parts := make([]string, 0, len(keys))
	args := make([]any, 0, n*len(keys))
	for i, k := range keys {
		sel := make([]string, n)
		for j := range sel {
			sel[j] = "?"
			if i == 0 {
				sel[j] = fmt.Sprintf("? AS k%d", j)
			}
			args = append(args, k[j])
		}
		parts = append(parts, "SELECT "+strings.Join(sel, ", "))
	}
	return bun.SafeQuery(strings.Join(parts, " UNION ALL "), args...)
}

// keyJoinOn is the condition that each qualified column equals its key column:
// cols[j] = rtn_batch_keys.kj.
func keyJoinOn(cols []schema.QueryAppender) schema.QueryAppender {
	parts := make([]string, len(cols))
	args := make([]any, len(cols))
	for j, c := range cols {
		parts[j] = fmt.Sprintf("? = rtn_batch_keys.k%d", j)
		args[j] = c
	}
	return bun.SafeQuery(strings.Join(parts, " AND "), args...)
}
