package ledger

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes"
)

// RequestSweepUnlessQueued is RequestSweep for a request that only needs to be waiting
// once: when a sweep of pass is already queued and unclaimed it records nothing and
// returns false. Cluster mode asks for drain helpers this way after every sweep that
// leaves work, so a helper that is busy does not pile up requests.
func (l *Ledger) RequestSweepUnlessQueued(ctx context.Context, pass string, at time.Time) (bool, error) {
	made := false
	err := passes.TxUnitOfWork{DB: l.db}.Execute(ctx, func(ctx context.Context) error {
		tx := passes.DB(ctx, l.db)
		var queued int
		if err := tx.NewRaw("SELECT count(*) FROM ? WHERE pass_name = ? AND state = ?",
			bun.Ident(l.table("work_queue")), pass, WorkQueued).Scan(ctx, &queued); err != nil {
			return err
		}
		if queued > 0 {
			return nil
		}
		if _, err := l.requestSweepTx(ctx, tx, pass, at); err != nil {
			return err
		}
		made = true
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("ledger: request a sweep of %q: %w", pass, err)
	}
	return made, nil
}
