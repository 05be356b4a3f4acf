package passes

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"
)

// OldestHeld returns the timestamp of the oldest row past the cutoff that a child with
// on_delete: block keeps (a legal hold), and false when there is none. Together with
// DryRunResult.Blocked it lets a dashboard show held rows apart from the rows a sweep
// could delete, so a drained table with a few held rows does not look behind forever.
func (t *Table) OldestHeld(ctx context.Context, at time.Time) (time.Time, bool, error) {
	if len(t.blockers) == 0 {
		return time.Time{}, false, nil
	}
	lay, err := t.readLayout(ctx, t.db)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("pass %q: oldest held row: %w", t.name, err)
	}
	unblocked := *t
	unblocked.blockers = nil
	q := unblocked.eligible(t.db.NewSelect().TableExpr("?", ident(t.spec.Table)), t.cutoff(at, lay))
	q = q.WhereGroup(" AND ", func(q *bun.SelectQuery) *bun.SelectQuery {
		for _, b := range t.blockers {
			q = q.WhereOr("EXISTS (SELECT 1 FROM ? WHERE ?)", ident(b.spec.Table), joinOn(b.spec.Table, b.foreignKey(), t.spec.Table, t.key))
		}
		return q
	})
	var raw any
	if err := q.ColumnExpr("?", t.oldestExpr()).Scan(ctx, &raw); err != nil {
		return time.Time{}, false, fmt.Errorf("pass %q: oldest held row: %w", t.name, err)
	}
	return t.timeOf(raw, lay)
}
