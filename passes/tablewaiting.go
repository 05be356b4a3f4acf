package passes

import (
	"context"
	"slices"

	"github.com/uptrace/bun"
)

// maxExcluded bounds how many bisection-skipped keys the passed-over check leaves out
// by name; past it the check is not made (the skipped rows alone would answer it).
const maxExcluded = 1000

// passedOver runs after a short batch on PostgreSQL, where FOR UPDATE SKIP LOCKED
// passes over expired rows another transaction holds without a word: the batch comes
// up short, and the sweep would end as if none were left. It asks, without locking,
// whether any eligible row remains anywhere in the table (other than rows bisection
// skipped in this sweep, which wait for the next one); if one does, it was passed over
// (or written since with an old timestamp), so the pass reports MoreWaiting and rewinds
// its cursor to the start, so the next batch tries those rows again (leaving out the
// rows bisection skipped, so they are not bisected again in this sweep). A check that fails
// also reports MoreWaiting: it cannot tell that none are left. SQLite never passes a
// row over: its writers take turns.
func (s *tableSweep) passedOver(ctx context.Context, db bun.IDB, cut cutoff) {
	t := s.t
	if !t.drv.SkipsLocked() || len(s.skipped) > maxExcluded {
		return
	}
	q := t.eligible(db.NewSelect().TableExpr("?", ident(t.spec.Table)), cut).ColumnExpr("1").Limit(1)
	if out := s.excluded(s.skipped); len(out) > 0 {
		q = q.Where("? NOT IN (?)", tuple(t.spec.Table, t.key), keyList(out))
	}
	remain, err := q.Exists(ctx)
	if err != nil || remain {
		s.cursor, s.exclude = nil, slices.Clone(s.skipped)
		ReportMoreWaiting(ctx)
	}
}
