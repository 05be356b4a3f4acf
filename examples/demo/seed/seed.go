package main

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/ledger"
)

// seed creates the demo tables and rows in a new SQLite database at path, timed from now.
func seed(ctx context.Context, path string, rows int, now time.Time) error {
	db, err := passes.Open(ctx, passes.DriverSQLite, path)
	if err != nil {
		return err
	}
	defer db.Close()
	step := int64(300 * 24 * 3600 / rows)
	stmts := []string{
		`CREATE TABLE audit_log (id INTEGER PRIMARY KEY, occurred_at TEXT NOT NULL, state TEXT NOT NULL, action TEXT NOT NULL)`,
		`CREATE INDEX audit_log_occurred_at ON audit_log (occurred_at, id)`,
		`CREATE TABLE audit_attachment (id INTEGER PRIMARY KEY, audit_log_id INTEGER NOT NULL REFERENCES audit_log (id))`,
		`CREATE INDEX audit_attachment_log ON audit_attachment (audit_log_id)`,
		`CREATE TABLE audit_review (id INTEGER PRIMARY KEY, audit_log_id INTEGER REFERENCES audit_log (id))`,
		`CREATE INDEX audit_review_log ON audit_review (audit_log_id)`,
		`CREATE TABLE legal_hold (id INTEGER PRIMARY KEY, audit_log_id INTEGER NOT NULL REFERENCES audit_log (id))`,
		`CREATE INDEX legal_hold_log ON legal_hold (audit_log_id)`,
		// A table the pass does not know about: its references make those rows fail to
		// delete, so the sweep bisects around them and reports each as skipped.
		`CREATE TABLE export_job (id INTEGER PRIMARY KEY, audit_log_id INTEGER NOT NULL REFERENCES audit_log (id))`,
		fmt.Sprintf(`WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < %d)
			INSERT INTO audit_log (id, occurred_at, state, action)
			SELECT i, strftime('%%Y-%%m-%%d %%H:%%M:%%S', %d - (%d - i) * %d, 'unixepoch') || '+00:00',
				CASE WHEN i %% 13 = 0 THEN 'pending' WHEN i %% 5 = 0 THEN 'failed' ELSE 'done' END, 'login'
			FROM s`, rows, now.Unix(), rows, step),
		`INSERT INTO audit_attachment (audit_log_id) SELECT id FROM audit_log WHERE id % 4 = 0`,
		`INSERT INTO audit_review (audit_log_id) SELECT id FROM audit_log WHERE id % 9 = 0`,
		`INSERT INTO legal_hold (audit_log_id) SELECT id FROM audit_log WHERE id % 1000 = 7`,
		`INSERT INTO export_job (audit_log_id) SELECT id FROM audit_log WHERE id IN (1001, 50003, 120011)`,
		`CREATE TABLE session (id INTEGER PRIMARY KEY, last_seen INTEGER NOT NULL)`,
		`CREATE INDEX session_last_seen ON session (last_seen, id)`,
		fmt.Sprintf(`WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 20000)
			INSERT INTO session (id, last_seen) SELECT i, %d - i * 1 FROM s`, now.Unix()),
	}
	for _, s := range stmts {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("%.60s: %w", s, err)
		}
	}
	return seedLedger(ctx, db, now)
}

// seedLedger creates the ledger's tables in db and writes an hour of finished
// work-queue polls, for the metadata cleanup to prune.
func seedLedger(ctx context.Context, db *bun.DB, now time.Time) error {
	if _, err := ledger.Migrate(ctx, db, ledger.DefaultPrefix); err != nil {
		return err
	}
	l, err := ledger.New(db, ledger.DefaultPrefix)
	if err != nil {
		return err
	}
	for i := range 500 { // an hour of work-queue polls, for the metadata cleanup to prune
		at := now.Add(-time.Hour + time.Duration(i)*7*time.Second)
		id, err := l.StartRun(ctx, ledger.NameWorkQueuePoller, at, at, nil)
		if err != nil {
			return err
		}
		if err := l.FinishRun(ctx, id, ledger.Finish{End: at, State: ledger.Completed, StopReason: "claimed"}); err != nil {
			return err
		}
	}
	return nil
}
