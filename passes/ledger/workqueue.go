package ledger

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes"
)

// The work-queue states a requested sweep moves through.
const (
	WorkClaimed = "Claimed"
	WorkDone    = "Done"
)

// Claim is a requested sweep a runtime took: it runs the pass and finishes run RunID.
type Claim struct {
	WorkID int64
	RunID  int64
	Pass   string
	// Retry is true when the run retries a dead letter: the pass was stopped by
	// supervision and has to be revived first.
	Retry bool
}

// RequestSweep records a "sweep now" for pass: a Pending run and a Queued work-queue row
// owning it, in one transaction. Whichever runtime sharing the database polls first
// claims it; every other sees it taken.
func (l *Ledger) RequestSweep(ctx context.Context, pass string, at time.Time) (Claim, error) {
	var c Claim
	err := passes.TxUnitOfWork{DB: l.db}.Execute(ctx, func(ctx context.Context) error {
		var err error
		c, err = l.requestSweepTx(ctx, passes.DB(ctx, l.db), pass, at)
		return err
	})
	if err != nil {
		return Claim{}, fmt.Errorf("ledger: request a sweep of %q: %w", pass, err)
	}
	return c, nil
}

func (l *Ledger) requestSweepTx(ctx context.Context, tx bun.IDB, pass string, at time.Time) (Claim, error) {
	run := &Run{Name: pass, State: Pending, StartTime: at.UTC()}
	if _, err := tx.NewInsert().Model(run).ModelTableExpr(l.table("metadata")).Returning("id").Exec(ctx); err != nil {
		return Claim{}, err
	}
	work := &workRow{PassName: pass, RequestedTime: at.UTC(), State: WorkQueued, MetadataID: run.ID}
	_, err := tx.NewInsert().Model(work).ModelTableExpr(l.table("work_queue")).Returning("id").Exec(ctx)
	return Claim{WorkID: work.ID, RunID: run.ID, Pass: pass}, err
}

// workRow is a row of the work queue as a request inserts it. It is inserted through
// bun's model so its id comes back as each database gives it: RETURNING on PostgreSQL,
// SQLite and MariaDB, the last insert id on MySQL 8, which has no RETURNING.
type workRow struct {
	ID            int64     `bun:"id,pk,autoincrement"`
	PassName      string    `bun:"pass_name"`
	RequestedTime time.Time `bun:"requested_time"`
	State         string    `bun:"state"`
	MetadataID    int64     `bun:"metadata_id"`
}

// ClaimWork takes up to n queued sweeps of the named passes, oldest first, exactly once
// across every runtime sharing the database (on PostgreSQL FOR UPDATE SKIP LOCKED; SQLite
// serialises the write transactions), marks them Claimed and their runs InProgress,
// owned by this node.
func (l *Ledger) ClaimWork(ctx context.Context, names []string, n int, at time.Time) ([]Claim, error) {
	if len(names) == 0 {
		return nil, nil
	}
	var claims []Claim
	err := passes.TxUnitOfWork{DB: l.db}.Execute(ctx, func(ctx context.Context) error {
		tx := passes.DB(ctx, l.db)
		claims = nil
		q := tx.NewSelect().TableExpr("? AS w", bun.Ident(l.table("work_queue"))).
			ColumnExpr("w.id, w.metadata_id, w.pass_name").
			ColumnExpr("EXISTS (SELECT 1 FROM ? AS d WHERE d.retry_metadata_id = w.metadata_id)", bun.Ident(l.table("dead_letter"))).
			Where("w.state = ?", WorkQueued).Where("w.pass_name IN (?)", bun.List(names)).
			OrderExpr("w.requested_time, w.id").Limit(int64(n))
		q = l.driver.LedgerLock(q, "w", true)
		rows, err := q.Rows(ctx)
		if err != nil {
			return err
		}
		for rows.Next() {
			var c Claim
			if err := rows.Scan(&c.WorkID, &c.RunID, &c.Pass, &c.Retry); err != nil {
				rows.Close()
				return err
			}
			claims = append(claims, c)
		}
		rows.Close()
		for _, c := range claims {
			if _, err := tx.NewRaw("UPDATE ? SET state = ? WHERE id = ? AND state = ?", bun.Ident(l.table("work_queue")), WorkClaimed, c.WorkID, WorkQueued).Exec(ctx); err != nil {
				return err
			}
			if _, err := tx.NewRaw("UPDATE ? SET state = ?, start_time = ?, node_id = ? WHERE id = ?", bun.Ident(l.table("metadata")), InProgress, at.UTC(), l.owner(), c.RunID).Exec(ctx); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("ledger: claim work: %w", err)
	}
	return claims, nil
}

// FinishWork marks the work-queue rows owning runs Done.
func (l *Ledger) FinishWork(ctx context.Context, runIDs []int64) error {
	if len(runIDs) == 0 {
		return nil
	}
	_, err := l.db.NewRaw("UPDATE ? SET state = ? WHERE metadata_id IN (?)", bun.Ident(l.table("work_queue")), WorkDone, bun.List(runIDs)).Exec(ctx)
	return err
}

// ActivateRun moves a claimed run to InProgress with the sweep's start and cutoff, owned
// by this node.
func (l *Ledger) ActivateRun(ctx context.Context, id int64, start, cutoff time.Time) error {
	_, err := l.db.NewRaw("UPDATE ? SET state = ?, start_time = ?, cutoff = ?, node_id = ? WHERE id = ?",
		bun.Ident(l.table("metadata")), InProgress, start.UTC(), cutoff.UTC(), l.owner(), id).Exec(ctx)
	if err != nil {
		return fmt.Errorf("ledger: activate run %d: %w", id, err)
	}
	return nil
}
