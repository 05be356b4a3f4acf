package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/ledger"
)

const (
	ledgerPrefix = "retention_"
)

// ledgerReport measures the metadata cleanup on PostgreSQL: N runs of an internal name,
// all expired and terminal, half of them with a log row and a tenth with a finished
// work-queue row, cleaned at two batch sizes.
func ledgerReport(ctx context.Context, c config, report *strings.Builder) error {
	admin, err := passes.Open(ctx, passes.DriverPostgres, c.adminDSN)
	if err != nil {
		return err
	}
	defer admin.Close()
	if err := buildLedgerTemplate(ctx, admin, c); err != nil {
		return err
	}
	sizes := []int{1000, 10000}
	rates := make([][]float64, len(sizes))
	for rep := 1; rep <= c.reps; rep++ {
		for i, size := range sizes {
			r, err := ledgerRun(ctx, admin, c, size)
			if err != nil {
				return err
			}
			fmt.Fprintf(os.Stderr, "drain: ledger cleanup rep %d B=%d: %.0f runs/s\n", rep, size, r.rate())
			rates[i] = append(rates[i], r.rate())
		}
	}
	fmt.Fprintf(report, "### The metadata cleanup on PostgreSQL\n\n%d expired, terminal runs of an internal name; every second one has a log row and every tenth a finished work-queue row, all deleted with their run. No concurrent load.\n\n", c.rows)
	fmt.Fprintln(report, "| delete_batch_size | runs/s |")
	fmt.Fprintln(report, "| ---: | ---: |")
	for i, size := range sizes {
		fmt.Fprintf(report, "| %d | %s |\n", size, spreadOf(rates[i]).format("", 0))
	}
	fmt.Fprintln(report)
	return nil
}

func buildLedgerTemplate(ctx context.Context, admin *bun.DB, c config) error {
	var exists bool
	if err := admin.NewRaw("SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = ?)", (c.dbPrefix+"_ledger_tpl")).Scan(ctx, &exists); err != nil {
		return err
	}
	if exists {
		db, err := passes.Open(ctx, passes.DriverPostgres, withDatabase(c.adminDSN, (c.dbPrefix+"_ledger_tpl")))
		if err == nil {
			var n int
			err = db.NewRaw("SELECT count(*) FROM "+ledgerPrefix+"metadata").Scan(ctx, &n)
			db.Close()
			if err == nil && n == c.rows {
				return nil
			}
		}
		if _, err := admin.ExecContext(ctx, "DROP DATABASE "+(c.dbPrefix+"_ledger_tpl")+" WITH (FORCE)"); err != nil {
			return err
		}
	}
	fmt.Fprintf(os.Stderr, "drain: building the %d-run ledger template\n", c.rows)
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+(c.dbPrefix+"_ledger_tpl")); err != nil {
		return err
	}
	db, err := passes.Open(ctx, passes.DriverPostgres, withDatabase(c.adminDSN, (c.dbPrefix+"_ledger_tpl")))
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := ledger.Migrate(ctx, db, ledgerPrefix); err != nil {
		return err
	}
	p := ledgerPrefix
	stmts := []string{
		fmt.Sprintf(`INSERT INTO %smetadata (name, state, start_time, end_time, rows_deleted, batches, stop_reason)
			SELECT '%s', (ARRAY['Completed','Failed','Cancelled'])[1 + i %% 3], '2026-01-01'::timestamptz + i * interval '1 second',
				'2026-01-01'::timestamptz + i * interval '1 second', 0, 1, 'drained'
			FROM generate_series(1, %d) AS i`, p, ledger.NameWorkQueuePoller, c.rows),
		fmt.Sprintf(`INSERT INTO %slog (metadata_id, level, time, message) SELECT id, 'info', start_time, 'claimed' FROM %smetadata WHERE id %% 2 = 0`, p, p),
		fmt.Sprintf(`INSERT INTO %swork_queue (pass_name, requested_time, state, metadata_id) SELECT 'audit-log', start_time, 'Done', id FROM %smetadata WHERE id %% 10 = 0`, p, p),
		"VACUUM ANALYZE",
	}
	for _, s := range stmts {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("%s: %w", strings.Fields(s)[0], err)
		}
	}
	return nil
}

func ledgerRun(ctx context.Context, admin *bun.DB, c config, batch int) (result, error) {
	if _, err := admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+(c.dbPrefix+"_ledger")+" WITH (FORCE)"); err != nil {
		return result{}, err
	}
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+(c.dbPrefix+"_ledger")+" TEMPLATE "+(c.dbPrefix+"_ledger_tpl")+" STRATEGY FILE_COPY"); err != nil {
		return result{}, err
	}
	db, err := passes.Open(ctx, passes.DriverPostgres, withDatabase(c.adminDSN, (c.dbPrefix+"_ledger")))
	if err != nil {
		return result{}, err
	}
	defer db.Close()
	l, err := ledger.New(db, ledgerPrefix)
	if err != nil {
		return result{}, err
	}
	plan, err := ledger.CleanupConfig{DeleteBatchSize: batch}.Build()
	if err != nil {
		return result{}, err
	}
	p, _ := ledger.NewCleanup(l, plan).Factory()(ctx)
	now := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	rows, elapsed, err := timed(func() (int64, error) {
		var total int64
		for {
			n, err := p.PurgeBatch(ctx, batch, now.Add(-plan.Retention))
			if err != nil {
				return total, err
			}
			total += int64(n)
			if n < batch {
				return total, nil
			}
		}
	})
	if err != nil {
		return result{}, err
	}
	if rows != int64(c.rows) {
		return result{}, fmt.Errorf("cleaned %d runs, want %d", rows, c.rows)
	}
	return result{rows: rows, elapsed: elapsed}, nil
}
