package ledger

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/uptrace/bun"
)

// BacklogSampleRetention is how long backlog samples are kept: long enough to see a
// backlog grow across a day, short enough that a node with a thousand passes keeps a
// bounded table (samples are at least a few minutes apart; see node/metrics).
const BacklogSampleRetention = 48 * time.Hour

// BacklogSample is one measurement of one pass's backlog.
type BacklogSample struct {
	PassName string    `bun:"pass_name,pk"`
	At       time.Time `bun:"at,pk"`
	// Rows is what a sweep could delete then; Held is what it would not (kept by a
	// block child or quarantined).
	Rows int64 `bun:"backlog_rows,notnull"`
	Held int64 `bun:"held_rows,notnull"`
}

// RecordBacklog stores one measurement of every pass in samples (keyed by pass name)
// taken at at, and drops samples older than BacklogSampleRetention, in one transaction.
// A second measurement at the same instant is ignored.
func (l *Ledger) RecordBacklog(ctx context.Context, at time.Time, samples map[string]BacklogSample) error {
	at = at.UTC()
	rows := make([]BacklogSample, 0, len(samples))
	for _, name := range slices.Sorted(maps.Keys(samples)) {
		s := samples[name]
		s.PassName, s.At = name, at
		rows = append(rows, s)
	}
	err := l.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		for chunk := range slices.Chunk(rows, 200) {
			q := tx.NewInsert().Model(&chunk).ModelTableExpr(l.table("backlog_sample"))
			if _, err := l.driver.LedgerUpsert(q, []string{"pass_name", "at"}).Exec(ctx); err != nil {
				return err
			}
		}
		_, err := tx.NewDelete().TableExpr("?", bun.Ident(l.table("backlog_sample"))).Where("at < ?", at.Add(-BacklogSampleRetention)).Exec(ctx)
		return err
	})
	if err != nil {
		return fmt.Errorf("ledger: record backlog of %d passes: %w", len(rows), err)
	}
	return nil
}

// BacklogHistory returns pass's backlog samples taken at or after since, oldest first.
func (l *Ledger) BacklogHistory(ctx context.Context, pass string, since time.Time) ([]BacklogSample, error) {
	samples := []BacklogSample{}
	err := l.db.NewSelect().Model(&samples).ModelTableExpr(l.table("backlog_sample")+" AS backlog_sample").
		Where("pass_name = ?", pass).Where("at >= ?", since.UTC()).OrderExpr("at").Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("ledger: backlog history of %q: %w", pass, err)
	}
	return samples, nil
}
