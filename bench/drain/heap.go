package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes"
)

// The heap mode (-heap-rows 100000,10000000) asks whether the runtime's memory grows
// with the backlog: it drains tables of each size with the table pass on the runtime
// (no load, the default batch of 500, one unbounded sweep) and samples the live heap
// every few milliseconds. A runtime that kept something per batch or per row would show
// a peak that grows with the rows; one that does not shows the same peak at every size.

// heapSample is what the sampler reads: bytes in live and not yet swept heap objects,
// the figure the garbage collector's pacing works from.
const heapSample = "/memory/classes/heap/objects:bytes"

func heapReport(ctx context.Context, c config, report *strings.Builder) error {
	admin, err := passes.Open(ctx, passes.DriverPostgres, c.adminDSN)
	if err != nil {
		return err
	}
	defer admin.Close()
	fmt.Fprintf(report, "### Peak heap by backlog size (PostgreSQL, no load)\n\n")
	fmt.Fprintf(report, "The table pass on the runtime, batch %d, one sweep with no batch bound; the Go heap (`%s`, live and unswept objects) sampled every %v from before `Start` to `SweepDone`, after a forced GC. Ratios are to the smallest table's peak in the same repetition.\n\n",
		passes.DefaultBatchSize, heapSample, heapEvery)
	fmt.Fprintln(report, "| rows in the table | expired rows drained | rows/s | peak heap MiB | ÷ smallest table's peak |")
	fmt.Fprintln(report, "| ---: | ---: | ---: | ---: | ---: |")
	type run struct {
		rows int64
		rate float64
		peak uint64
	}
	runs := make([][]run, len(c.heapRows))
	for rep := 1; rep <= c.reps; rep++ {
		for i, n := range c.heapRows {
			db, cutoff, err := heapTable(ctx, admin, c, n)
			if err != nil {
				return err
			}
			rows, elapsed, peak, err := drainSampled(ctx, db, cutoff)
			db.Close()
			if err != nil {
				return fmt.Errorf("heap %d rows: %w", n, err)
			}
			if want := int64(n*9/10 - 1); rows != want {
				return fmt.Errorf("heap %d rows: drained %d, want %d", n, rows, want)
			}
			fmt.Fprintf(os.Stderr, "drain: heap rep %d rows %d: %.0f rows/s, peak heap %d bytes\n", rep, n, float64(rows)/elapsed.Seconds(), peak)
			runs[i] = append(runs[i], run{rows: rows, rate: float64(rows) / elapsed.Seconds(), peak: peak})
		}
	}
	for i, n := range c.heapRows {
		var rates, peaks, ratios []float64
		for rep, r := range runs[i] {
			rates = append(rates, r.rate)
			peaks = append(peaks, float64(r.peak)/(1<<20))
			ratios = append(ratios, float64(r.peak)/float64(runs[0][rep].peak))
		}
		fmt.Fprintf(report, "| %d | %d | %s | %s | %s |\n", n, runs[i][0].rows, spreadOf(rates).format("", 0),
			spreadOf(peaks).format("", 2), spreadOf(ratios).format("", 2))
	}
	fmt.Fprintln(report)
	return nil
}

// heapEvery is the sampling period of the heap mode.
const heapEvery = 2 * time.Millisecond

// heapTable makes a fresh table of n rows (90% expired) in its own database, with a
// short payload so that the largest sizes fit the machine, and returns it.
func heapTable(ctx context.Context, admin *bun.DB, c config, n int) (*bun.DB, time.Time, error) {
	name := c.dbPrefix + "_heap"
	if _, err := admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
		return nil, time.Time{}, err
	}
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		return nil, time.Time{}, err
	}
	// Building ten million rows takes longer than the driver's default 10s read timeout.
	db, err := passes.Open(ctx, passes.DriverPostgres, withQuery(withDatabase(c.adminDSN, name), "read_timeout", "30m"))
	if err != nil {
		return nil, time.Time{}, err
	}
	fmt.Fprintf(os.Stderr, "drain: heap: building a %d-row table\n", n)
	stmts := []string{
		`CREATE TABLE audit_log (id bigserial PRIMARY KEY, occurred_at timestamptz NOT NULL, state text NOT NULL, payload text)`,
		fmt.Sprintf(`INSERT INTO audit_log (occurred_at, state, payload)
			SELECT '%s'::timestamptz + i * interval '10 seconds', 'completed', 'x'
			FROM generate_series(1, %d) AS i`, pgEpoch.Format(time.RFC3339), n),
		`CREATE INDEX audit_log_occurred_at ON audit_log (occurred_at, id)`,
		`VACUUM ANALYZE audit_log`,
		`CHECKPOINT`,
	}
	for _, s := range stmts {
		if _, err := db.ExecContext(ctx, s); err != nil {
			db.Close()
			return nil, time.Time{}, fmt.Errorf("%s: %w", strings.Fields(s)[0], err)
		}
	}
	return db, cutoffFor(n), nil
}

// drainSampled drains with the runtime while a goroutine records the largest heap seen.
func drainSampled(ctx context.Context, db *bun.DB, cutoff time.Time) (int64, time.Duration, uint64, error) {
	runtime.GC()
	stop := make(chan struct{})
	var peak uint64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		s := []metrics.Sample{{Name: heapSample}}
		tick := time.NewTicker(heapEvery)
		defer tick.Stop()
		for {
			metrics.Read(s)
			peak = max(peak, s[0].Value.Uint64())
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	rows, elapsed, err := drainWithRuntime(passes.DefaultBatchSize)(ctx, db, cutoff)
	close(stop)
	wg.Wait()
	return rows, elapsed, peak, err
}

// parseRows reads a comma-separated list of row counts.
func parseRows(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 10 {
			return nil, fmt.Errorf("-heap-rows: %q is not a row count of at least 10", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// withQuery sets one query parameter of a URL DSN.
func withQuery(dsn, key, value string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return dsn
	}
	q := u.Query()
	q.Set(key, value)
	u.RawQuery = q.Encode()
	return u.String()
}

// withoutQuery drops one query parameter of a URL DSN.
func withoutQuery(dsn, key string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return dsn
	}
	q := u.Query()
	q.Del(key)
	u.RawQuery = q.Encode()
	return u.String()
}
