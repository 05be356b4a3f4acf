package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes"
)

func sqliteVariants() []variant {
	return []variant{
		{"same pass, plain loop, no runtime", 500, drainPlainLoop(500)},
		{"table pass on the runtime (keyset)", 500, drainWithRuntime(500)},
		{"same pass, plain loop, no runtime", 5000, drainPlainLoop(5000)},
		{"table pass on the runtime (keyset)", 5000, drainWithRuntime(5000)},
		{"one unbounded DELETE", 0, drainUnboundedSQLite},
	}
}

func sqliteReport(ctx context.Context, c config, report *strings.Builder) error {
	tpl := filepath.Join(c.sqliteDir, fmt.Sprintf("retention-bench-tpl-%d.db", c.rows))
	if err := buildSQLiteTemplate(ctx, tpl, c.rows); err != nil {
		return err
	}
	cutoff := cutoffFor(c.rows)
	variants := filterVariants(c, sqliteVariants())
	results := make([][]result, len(variants))
	for rep := 1; rep <= c.reps; rep++ {
		for i, v := range variants {
			r, err := sqliteRun(ctx, c, tpl, cutoff, v)
			if err != nil {
				return fmt.Errorf("sqlite %s %d: %w", v.name, v.batch, err)
			}
			fmt.Fprintf(os.Stderr, "drain: sqlite rep %d %s B=%d: %.0f rows/s\n", rep, v.name, v.batch, r.rate())
			results[i] = append(results[i], r)
		}
	}
	fmt.Fprintln(report, "### SQLite (the embedded default), no concurrent load")
	fmt.Fprintln(report)
	fmt.Fprintln(report, "| variant | batch | rows/s | ÷ plain loop, same batch | ÷ unbounded |")
	fmt.Fprintln(report, "| --- | ---: | ---: | ---: | ---: |")
	for i, v := range variants {
		rates, vsPlain, vsUnbounded := ratios(variants, results, i)
		batch, plainCol := batchAndPlain(v, vsPlain)
		fmt.Fprintf(report, "| %s | %s | %s | %s | %s |\n", v.name, batch, spreadOf(rates).format("", 0), plainCol, spreadOf(vsUnbounded).format("", 2))
	}
	fmt.Fprintln(report)
	return nil
}

func buildSQLiteTemplate(ctx context.Context, path string, rows int) error {
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	fmt.Fprintf(os.Stderr, "drain: building the %d-row SQLite template\n", rows)
	tmp := path + ".building"
	_ = os.Remove(tmp)
	db, err := passes.Open(ctx, passes.DriverSQLite, tmp+"?_pragma=journal_mode(DELETE)")
	if err != nil {
		return err
	}
	stmts := []string{
		`CREATE TABLE audit_log (id INTEGER PRIMARY KEY, occurred_at TEXT NOT NULL, state TEXT NOT NULL, payload TEXT)`,
		fmt.Sprintf(`WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < %d)
			INSERT INTO audit_log (id, occurred_at, state, payload)
			SELECT i, strftime('%%Y-%%m-%%d %%H:%%M:%%S', %d + i * 10, 'unixepoch') || '+00:00',
				CASE i %% 3 WHEN 0 THEN 'completed' WHEN 1 THEN 'cancelled' ELSE 'discarded' END, printf('%%.200c', 'x')
			FROM s`, rows, pgEpoch.Unix()),
		`CREATE INDEX audit_log_occurred_at ON audit_log (occurred_at, id)`,
		`ANALYZE`,
	}
	for _, s := range stmts {
		if _, err := db.ExecContext(ctx, s); err != nil {
			db.Close()
			return fmt.Errorf("%s: %w", strings.Fields(s)[0], err)
		}
	}
	if err := db.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func sqliteRun(ctx context.Context, c config, tpl string, cutoff time.Time, v variant) (result, error) {
	path := filepath.Join(c.sqliteDir, "retention-bench.db")
	for _, suffix := range []string{"", "-wal", "-shm"} {
		_ = os.Remove(path + suffix)
	}
	if err := copyFile(tpl, path); err != nil {
		return result{}, err
	}
	db, err := passes.Open(ctx, passes.DriverSQLite, path)
	if err != nil {
		return result{}, err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, "SELECT count(*) FROM audit_log"); err != nil {
		return result{}, err
	}
	rows, elapsed, err := v.drain(ctx, db, cutoff)
	if err != nil {
		return result{}, err
	}
	if rows != int64(c.rows*9/10-1) {
		return result{}, fmt.Errorf("drained %d rows, want %d", rows, c.rows*9/10-1)
	}
	return result{rows: rows, elapsed: elapsed}, nil
}

func drainUnboundedSQLite(ctx context.Context, db *bun.DB, cutoff time.Time) (int64, time.Duration, error) {
	return timed(func() (int64, error) {
		res, err := db.ExecContext(ctx, "DELETE FROM audit_log WHERE occurred_at < ?", cutoff.UTC().Format("2006-01-02 15:04:05.999999-07:00"))
		if err != nil {
			return 0, err
		}
		return res.RowsAffected()
	})
}

func copyFile(from, to string) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}
