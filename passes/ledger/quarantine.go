package ledger

import (
	"context"
	"fmt"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/core/clock"
	"github.com/retentionkit/retention/passes"
)

// Quarantine backoff. A row that enters quarantine is tried again one sweep interval of
// its pass later (DefaultQuarantineBackoff when the interval is not known), and every
// failed attempt doubles the wait, up to MaxQuarantineBackoff: a row held for good
// costs one single-row delete a day, not a bisection every sweep.
const (
	DefaultQuarantineBackoff = time.Hour
	MaxQuarantineBackoff     = 24 * time.Hour
	// maxErrorText bounds the error text a quarantine row keeps.
	maxErrorText = 500
)

// QuarantinedRow is one row of the quarantine: a row of a swept table whose delete
// failed on its own, what the database said, and when it is tried again.
type QuarantinedRow struct {
	PassName string `bun:"pass_name,pk"`
	// Key is the row's key as passes.KeyText writes it ([42], ["eu",7]).
	Key   string `bun:"row_key,pk"`
	Error string `bun:"error,notnull"`
	// Constraint and ReferencingTable are what the database named, nil when it did not
	// (SQLite names neither).
	Constraint       *string   `bun:"constraint_name"`
	ReferencingTable *string   `bun:"referencing_table"`
	FirstSeen        time.Time `bun:"first_seen,notnull"`
	LastSeen         time.Time `bun:"last_seen,notnull"`
	// Attempts counts the failed deletes, the one that quarantined the row included.
	Attempts    int64     `bun:"attempts,notnull"`
	NextAttempt time.Time `bun:"next_attempt,notnull"`
}

// Quarantine is the ledger's passes.Quarantine: it keeps quarantined rows in
// <prefix>quarantine and schedules their next attempts with an exponential backoff per
// row. Build it with Ledger.Quarantine and hand it to passes.Table.WithQuarantine.
type Quarantine struct {
	ledger    *Ledger
	clock     clock.Clock
	intervals map[string]time.Duration
	warn      func(string)
	summary   *quarantineSummary
}

var _ passes.Quarantine = (*Quarantine)(nil)

// Quarantine returns the ledger's quarantine; intervals is each pass's sweep interval,
// the first wait of its rows (see DefaultQuarantineBackoff).
func (l *Ledger) Quarantine(intervals map[string]time.Duration) *Quarantine {
	return &Quarantine{ledger: l, clock: clock.Real(), intervals: intervals}
}

// WithClock returns the quarantine reading time from c (tests use a manual clock).
func (q *Quarantine) WithClock(c clock.Clock) *Quarantine {
	cp := *q
	cp.clock = clock.OrReal(c)
	return &cp
}

// WithWarnings returns the quarantine calling warn with a summary of a pass's
// quarantine ("2 rows in quarantine for pass orders") when a sweep finds its count
// changed, not at every sweep.
func (q *Quarantine) WithWarnings(warn func(string)) *Quarantine {
	cp := *q
	cp.warn, cp.summary = warn, &quarantineSummary{}
	return &cp
}

// Backoff is the wait after a row's attempts-th failed delete: the pass's interval,
// doubled for every attempt after the first, at most MaxQuarantineBackoff.
func (q *Quarantine) Backoff(pass string, attempts int64) time.Duration {
	d := q.intervals[pass]
	if d <= 0 {
		d = DefaultQuarantineBackoff
	}
	for i := int64(1); i < attempts && d < MaxQuarantineBackoff; i++ {
		d *= 2
	}
	return min(d, MaxQuarantineBackoff)
}

// Quarantined returns the pass's quarantined rows, each due when its next attempt has
// come, and warns with a one-line summary when their number changed since it last did.
func (q *Quarantine) Quarantined(ctx context.Context, pass string) ([]passes.QuarantinedKey, error) {
	var rows []QuarantinedRow
	err := q.ledger.db.NewSelect().Model(&rows).ModelTableExpr(q.ledger.table("quarantine")+" AS quarantined_row").
		Column("row_key", "next_attempt").Where("pass_name = ?", pass).Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("ledger: quarantine of %q: %w", pass, err)
	}
	now := q.clock.Now()
	keys := make([]passes.QuarantinedKey, len(rows))
	due := 0
	for i, r := range rows {
		keys[i] = passes.QuarantinedKey{Key: r.Key, Due: !r.NextAttempt.After(now)}
		if keys[i].Due {
			due++
		}
	}
	if q.warn != nil && q.summary.changed(pass, len(rows)) && len(rows) > 0 {
		q.warn(fmt.Sprintf("%d rows in quarantine for pass %s (%d due for another attempt in this sweep)", len(rows), pass, due))
	}
	return keys, nil
}

// Hold records a failed delete of row: a new quarantine row (entered), or one more
// attempt of an existing one, with the latest error and the next attempt after the
// backoff.
func (q *Quarantine) Hold(ctx context.Context, pass string, row *passes.RowError) (bool, error) {
	now := q.clock.Now().UTC()
	r := &QuarantinedRow{PassName: pass, Key: passes.KeyText(row.Key), Error: shortError(row.Err),
		Constraint: nullString(row.Constraint), ReferencingTable: nullString(row.Table),
		FirstSeen: now, LastSeen: now, Attempts: 1, NextAttempt: now.Add(q.Backoff(pass, 1))}
	var entered bool
	err := passes.TxUnitOfWork{DB: q.ledger.db}.Execute(ctx, func(ctx context.Context) error {
		tx := passes.DB(ctx, q.ledger.db)
		ins := tx.NewInsert().Model(r).ModelTableExpr(q.ledger.table("quarantine"))
		res, err := q.ledger.driver.LedgerUpsert(ins, []string{"pass_name", "row_key"}).Exec(ctx)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 1 {
			entered = true
			return nil
		}
		return q.again(ctx, tx, r)
	})
	if err != nil {
		return false, fmt.Errorf("ledger: quarantine row %s of %q: %w", r.Key, pass, err)
	}
	return entered, nil
}

// again counts one more failed attempt of a row already in quarantine.
func (q *Quarantine) again(ctx context.Context, tx bun.IDB, r *QuarantinedRow) error {
	var attempts int64
	sel := tx.NewSelect().TableExpr("?", bun.Ident(q.ledger.table("quarantine"))).Column("attempts").
		Where("pass_name = ?", r.PassName).Where("row_key = ?", r.Key)
	sel = q.ledger.driver.LedgerLock(sel, "", false)
	if err := sel.Scan(ctx, &attempts); err != nil {
		return err
	}
	attempts++
	_, err := tx.NewUpdate().TableExpr("?", bun.Ident(q.ledger.table("quarantine"))).
		Set("attempts = ?", attempts).Set("last_seen = ?", r.LastSeen).
		Set("next_attempt = ?", r.LastSeen.Add(q.Backoff(r.PassName, attempts))).
		Set("error = ?", r.Error).Set("constraint_name = ?", r.Constraint).Set("referencing_table = ?", r.ReferencingTable).
		Where("pass_name = ?", r.PassName).Where("row_key = ?", r.Key).Exec(ctx)
	return err
}

// Release removes the pass's rows with keys from quarantine.
func (q *Quarantine) Release(ctx context.Context, pass string, keys []string) error {
	_, err := q.ledger.ReleaseQuarantined(ctx, pass, keys)
	return err
}

// ReleaseQuarantined removes the rows with keys (passes.KeyText) from quarantine, of
// pass or, when pass is "", of every pass, and returns how many it removed. A released
// row is tried again on its pass's next sweep.
func (l *Ledger) ReleaseQuarantined(ctx context.Context, pass string, keys []string) (int64, error) {
	var released int64
	for chunk := range slices.Chunk(keys, 500) {
		q := l.db.NewDelete().TableExpr("?", bun.Ident(l.table("quarantine"))).Where("row_key IN (?)", bun.List(chunk))
		if pass != "" {
			q = q.Where("pass_name = ?", pass)
		}
		res, err := q.Exec(ctx)
		if err != nil {
			return released, fmt.Errorf("ledger: release quarantined rows: %w", err)
		}
		n, _ := res.RowsAffected()
		released += n
	}
	return released, nil
}

// ReleaseAllQuarantined empties the quarantine of pass, or of every pass when pass is
// "", and returns how many rows it removed.
func (l *Ledger) ReleaseAllQuarantined(ctx context.Context, pass string) (int64, error) {
	q := l.db.NewDelete().TableExpr("?", bun.Ident(l.table("quarantine")))
	if pass != "" {
		q = q.Where("pass_name = ?", pass)
	} else {
		q = q.Where("1 = 1")
	}
	res, err := q.Exec(ctx)
	if err != nil {
		return 0, fmt.Errorf("ledger: release quarantined rows: %w", err)
	}
	n, _ := res.RowsAffected()
	return n, nil
}

// QuarantinedRows returns the quarantined rows of pass (of every pass when pass is ""),
// by pass and then oldest first.
func (l *Ledger) QuarantinedRows(ctx context.Context, pass string) ([]QuarantinedRow, error) {
	var rows []QuarantinedRow
	q := l.db.NewSelect().Model(&rows).ModelTableExpr(l.table("quarantine") + " AS quarantined_row").OrderExpr("pass_name, first_seen, row_key")
	if pass != "" {
		q = q.Where("pass_name = ?", pass)
	}
	if err := q.Scan(ctx); err != nil {
		return nil, fmt.Errorf("ledger: quarantined rows: %w", err)
	}
	return rows, nil
}

// QuarantineCounts returns how many rows each pass has in quarantine; a pass with none
// is absent. The metrics export it as a gauge per pass, so a growing quarantine can
// alert.
func (l *Ledger) QuarantineCounts(ctx context.Context) (map[string]int64, error) {
	var rows []struct {
		Pass  string `bun:"pass_name"`
		Count int64  `bun:"n"`
	}
	err := l.db.NewSelect().TableExpr("?", bun.Ident(l.table("quarantine"))).ColumnExpr("pass_name, COUNT(*) AS n").
		GroupExpr("pass_name").Scan(ctx, &rows)
	if err != nil {
		return nil, fmt.Errorf("ledger: quarantine counts: %w", err)
	}
	counts := make(map[string]int64, len(rows))
	for _, r := range rows {
		counts[r.Pass] = r.Count
	}
	return counts, nil
}

// shortError is the error text a quarantine row keeps: at most maxErrorText bytes, cut
// on a character boundary.
func shortError(err error) string {
	s := err.Error()
	if len(s) <= maxErrorText {
		return s
	}
	cut := maxErrorText
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
