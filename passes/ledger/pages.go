package ledger

import (
	"context"
	"fmt"
)

// QuarantinePage returns up to limit quarantined rows of every pass from offset on, in
// QuarantinedRows' order, and how many there are in all: the dashboard pages through a
// quarantine that can hold thousands of rows without reading them all on every refresh.
func (l *Ledger) QuarantinePage(ctx context.Context, offset, limit int) ([]QuarantinedRow, int, error) {
	rows := []QuarantinedRow{}
	total, err := l.db.NewSelect().Model(&rows).ModelTableExpr(l.table("quarantine") + " AS quarantined_row").
		OrderExpr("pass_name, first_seen, row_key").Offset(int64(offset)).Limit(int64(limit)).ScanAndCount(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("ledger: quarantined rows %d-%d: %w", offset+1, offset+limit, err)
	}
	return rows, int(total), nil
}

// DeadLetterPage returns up to limit dead letters from offset on, newest first, and how
// many there are in all.
func (l *Ledger) DeadLetterPage(ctx context.Context, offset, limit int) ([]DeadLetter, int, error) {
	letters := []DeadLetter{}
	total, err := l.db.NewSelect().Model(&letters).ModelTableExpr(l.table("dead_letter") + " AS dead_letter").
		OrderExpr("id DESC").Offset(int64(offset)).Limit(int64(limit)).ScanAndCount(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("ledger: dead letters %d-%d: %w", offset+1, offset+limit, err)
	}
	return letters, int(total), nil
}
