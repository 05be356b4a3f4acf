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
	if n.Stamp != nil {
		return d.deleteNextByStamp(db, n, sub), true
	}
	q := db.NewDelete().TableExpr("?", n.Table)
	if n.OneKey != nil {
		q = q.Where("? = ANY(ARRAY(?))", n.OneKey, sub)
	} else {
		q = q.Where("? IN (?)", n.Key, sub)
	}
	q = q.Returning("?", n.Returning)
	return db.NewRaw("WITH deleted AS (?) SELECT * FROM deleted ORDER BY ?", q, n.Order).String(), true
}

// deleteNextByStamp is DeleteNext for a several-column key that holds the timestamp.
// A row-value IN alone is planned as a hash semi join over a scan of the whole table,
// which on a table partitioned by the timestamp is every partition (issue 25: 686 ms a
// batch of 1,000 over 30 partitions). So the locked candidates are read once into a
// materialized CTE (every reference sees the same locked rows) and the delete adds three
// conditions on the timestamp, all implied by the key's equality since the timestamp
// is a key column: between the candidates' least and greatest timestamps, scalars the
// executor prunes the partitions with before it scans (an array is not used for
// pruning); and among their timestamps, which walks the timestamp's index. The key's
// IN still decides which rows go.
func (Driver) deleteNextByStamp(db bun.IDB, n driver.DeleteNext, sub *bun.SelectQuery) string {
	ts, name := n.Stamp.Column, n.Stamp.Name
	q := db.NewDelete().TableExpr("?", n.Table).
		Where("? >= (SELECT min(?) FROM rtn_candidates)", ts, name).
		Where("? <= (SELECT max(?) FROM rtn_candidates)", ts, name).
		Where("? = ANY(ARRAY(SELECT ? FROM rtn_candidates))", ts, name).
		Where("? IN (SELECT ? FROM rtn_candidates)", n.Key, n.Stamp.Key).
		Returning("?", n.Returning)
	return db.NewRaw("WITH rtn_candidates AS MATERIALIZED (?), deleted AS (?) SELECT * FROM deleted ORDER BY ?",
		sub, q, n.Order).String()
}

// LocksByKey is false: a locked read of the next rows locks only the rows it returns
// (PostgreSQL takes no gap or next-key locks),
// so a batch without children stays one statement.
func (Driver) LocksByKey() bool { return false }

// DeleteKeys deletes the locked rows by an IN list of their keys.
func (Driver) DeleteKeys(db bun.IDB, d driver.DeleteKeys) string {
	return db.NewDelete().TableExpr("?", d.Table).Where("? IN (?)", d.Match, d.In).String()
}
