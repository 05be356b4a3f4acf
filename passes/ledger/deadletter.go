package ledger

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/core"
	"github.com/retentionkit/retention/passes"
)

// DeadLetter is a pass supervision gave up on.
type DeadLetter struct {
	ID              int64      `bun:"id,pk,autoincrement"`
	PassName        string     `bun:"pass_name,notnull"`
	Error           string     `bun:"error,notnull"`
	CreatedTime     time.Time  `bun:"created_time,notnull"`
	MetadataID      *int64     `bun:"metadata_id"`
	RetryMetadataID *int64     `bun:"retry_metadata_id"`
	ResolvedTime    *time.Time `bun:"resolved_time"`
}

// AddDeadLetter records that supervision stopped pass, with the error and the failed
// run (failedRun 0: none recorded).
func (l *Ledger) AddDeadLetter(ctx context.Context, pass, errText string, failedRun int64, at time.Time) (int64, error) {
	d := &DeadLetter{PassName: pass, Error: errText, CreatedTime: at.UTC()}
	if failedRun > 0 {
		d.MetadataID = &failedRun
	}
	if _, err := l.db.NewInsert().Model(d).ModelTableExpr(l.table("dead_letter")).Returning("id").Exec(ctx); err != nil {
		return 0, fmt.Errorf("ledger: dead letter for %q: %w", pass, err)
	}
	return d.ID, nil
}

// RetryDeadLetter requests a new sweep of the dead letter's pass and links the new run
// to it through retry_metadata_id, marking the dead letter resolved. An unknown id is a
// *core.NotFoundError; an already retried one a *core.ConflictError.
func (l *Ledger) RetryDeadLetter(ctx context.Context, id int64, at time.Time) (Claim, error) {
	var c Claim
	err := passes.TxUnitOfWork{DB: l.db}.Execute(ctx, func(ctx context.Context) error {
		tx := passes.DB(ctx, l.db)
		var letters []DeadLetter
		q := tx.NewSelect().Model(&letters).ModelTableExpr(l.table("dead_letter")+" AS dead_letter").Where("id = ?", id)
		q = l.driver.LedgerLock(q, "", false)
		if err := q.Scan(ctx); err != nil {
			return err
		}
		if len(letters) == 0 {
			return core.NewNotFoundError("dead letter", id)
		}
		if letters[0].RetryMetadataID != nil {
			return core.NewConflictError(fmt.Sprintf("dead letter %d was already retried as run %d", id, *letters[0].RetryMetadataID))
		}
		var err error
		if c, err = l.requestSweepTx(ctx, tx, letters[0].PassName, at); err != nil {
			return err
		}
		_, err = tx.NewRaw("UPDATE ? SET retry_metadata_id = ?, resolved_time = ? WHERE id = ?",
			bun.Ident(l.table("dead_letter")), c.RunID, at.UTC(), id).Exec(ctx)
		return err
	})
	if err != nil {
		return Claim{}, fmt.Errorf("ledger: retry dead letter %d: %w", id, err)
	}
	return c, nil
}

// DeadLetters returns the dead letters, newest first.
func (l *Ledger) DeadLetters(ctx context.Context) ([]DeadLetter, error) {
	var letters []DeadLetter
	err := l.db.NewSelect().Model(&letters).ModelTableExpr(l.table("dead_letter") + " AS dead_letter").OrderExpr("id DESC").Scan(ctx)
	return letters, err
}
