package main

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/uptrace/bun"
)

// The drained table: bench/drain's shape. 90% of the rows are older than the 30-day
// retention, spread over ten days; the rest are recent.
const tableDDL = `CREATE TABLE audit_log (
	id bigserial PRIMARY KEY,
	occurred_at timestamptz NOT NULL,
	state text NOT NULL,
	payload text NOT NULL)`

// createTable (re)creates audit_log with rows rows, then vacuums, analyzes and
// checkpoints so every variant starts from the same state.
func createTable(ctx context.Context, db *bun.DB, rows int) error {
	expired := rows * 9 / 10
	stmts := []string{
		"DROP TABLE IF EXISTS audit_log",
		tableDDL,
		fmt.Sprintf(`INSERT INTO audit_log (occurred_at, state, payload)
			SELECT now() - interval '31 days' - (%d - g) * interval '1 second', 'done', repeat('x', 200)
			FROM generate_series(1, %d) g`, expired, expired),
		fmt.Sprintf(`INSERT INTO audit_log (occurred_at, state, payload)
			SELECT now() - g * interval '1 second', 'done', repeat('x', 200) FROM generate_series(1, %d) g`, rows-expired),
		"CREATE INDEX audit_log_occurred ON audit_log (occurred_at, id)",
		"VACUUM ANALYZE audit_log",
		"CHECKPOINT",
	}
	for _, s := range stmts {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("%.40s...: %w", s, err)
		}
	}
	return nil
}

// refill adds n expired rows timed after every expired row already there (but still
// before the cutoff), so they lie ahead of the sweep's keyset cursor: the sweep in
// progress reaches them without starting over. Their keys are the newest, which a real
// table's expired rows never are; so one live row follows them, as the application's
// next insert would, and the default probe (a lookup of the newest key) reads a live
// row rather than the dead index entries the sweep leaves behind. A checkpoint then
// writes the load out, so its aftermath burdens the next window less.
func refill(ctx context.Context, db *bun.DB, round, n int) error {
	base := "now() - interval '31 days' + interval '" + strconv.Itoa(round) + " minutes'"
	for _, s := range []string{
		fmt.Sprintf(`INSERT INTO audit_log (occurred_at, state, payload)
		SELECT %s + g * interval '1 microsecond', 'done', repeat('x', 200) FROM generate_series(1, %d) g`, base, n),
		`INSERT INTO audit_log (occurred_at, state, payload) VALUES (now(), 'new', repeat('x', 200))`,
		"CHECKPOINT",
	} {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("%.40s...: %w", s, err)
		}
	}
	return nil
}

// settle gives the server a moment after a refill. The refill comes right after a
// draining window's aftermath, so what is left of its own (dirty pages, autovacuum)
// falls into the gap and the not-draining window that follows. That lifts the
// reference a little, and more often for the heavier paces, which top up more often;
// the checkpoint in refill and this pause keep it small, and the report counts the
// top-ups of every pace.
func settle(pause time.Duration) { time.Sleep(pause) }

// clearAftermath vacuums the drained table and checkpoints, so what a draining window
// left behind (the dead rows autovacuum would clean up, the dirty pages a checkpoint
// would write) is done before the next window rather than during it. Without it, the
// heavier a pace, the more of its cost lands in the next pair's not-draining window,
// the ratio's denominator, and the better the pace looks. It returns how long that took:
// the same work for every pace per row deleted, but reported, since it is real.
func clearAftermath(ctx context.Context, db *bun.DB) (time.Duration, error) {
	start := time.Now()
	for _, s := range []string{"VACUUM audit_log", "CHECKPOINT"} {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return 0, fmt.Errorf("after a draining window: %s: %w", s, err)
		}
	}
	return time.Since(start), nil
}
