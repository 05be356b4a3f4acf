package postgres

import (
	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes/driver"
)

// LockCandidates locks the rows and skips those another transaction holds, so two
// sweepers take disjoint rows instead of queueing behind each other.
func (Driver) LockCandidates(q *bun.SelectQuery) *bun.SelectQuery {
	return q.For("UPDATE SKIP LOCKED")
}

// LockChildRows locks only alias's rows: the joined parents are read, not locked.
func (Driver) LockChildRows(q *bun.SelectQuery, alias string) *bun.SelectQuery {
	return q.For("UPDATE OF ? SKIP LOCKED", bun.Ident(alias))
}

// SkipsLocked is true: SKIP LOCKED passes rows over.
func (Driver) SkipsLocked() bool { return true }

// DeleteNext locks the candidates in a subquery (skipping rows another sweeper holds);
// a one-column key's candidates become an array, so the delete finds the rows through
// the key's index whatever the batch size. RETURNING comes in no particular order, so
// the deleted rows are sorted for the cursor, which wants the last one.
func (d Driver) DeleteNext(db bun.IDB, n driver.DeleteNext) (string, bool) {
	sub := d.LockCandidates(n.Candidates)
	q := db.NewDelete().TableExpr("?", n.Table)
	if n.OneKey != nil {
		q = q.Where("? = ANY(ARRAY(?))", n.OneKey, sub)
	} else {
		q = q.Where("? IN (?)", n.Key, sub)
	}
	q = q.Returning("?", n.Returning)
	return db.NewRaw("WITH deleted AS (?) SELECT * FROM deleted ORDER BY ?", q, n.Order).String(), true
}

// LocksByKey is false: a locked read of the next rows locks only the rows it returns
// (PostgreSQL takes no gap or next-key locks),
// so a batch without children stays one statement.
func (Driver) LocksByKey() bool { return false }

// DeleteKeys deletes the locked rows by an IN list of their keys.
func (Driver) DeleteKeys(db bun.IDB, d driver.DeleteKeys) string {
	return db.NewDelete().TableExpr("?", d.Table).Where("? IN (?)", d.Match, d.In).String()
}
