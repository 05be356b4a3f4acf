// Command partitions measures a table pass with partitions: on a PostgreSQL
// range-partitioned table (daily partitions) beside the same pass without it (the row
// path) and beside pg_partman's own retention (run_maintenance with retention set), each
// on a fresh copy of one fixture, at a cutoff on a partition boundary and at one in the
// middle of a partition, under a fixed-rate foreground load. For every run it reports the
// wall time to an empty eligible set, the foreground's p99 and longest lock wait, the WAL
// written, the dead tuples left, and whether the keep-set equals a reference computed by
// SQL from the fixture (both EXCEPTs empty). It writes a markdown report.
//
//	go run ./bench/partitions -out /tmp/partitions.md    # what make bench runs
//
// It needs PostgreSQL (-dsn, default $BENCH_PG_DSN or $TEST_DATABASE_URL) and, for the
// pg_partman rows, the pg_partman extension installable in that database.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"time"
)

// size is one fixture: parts daily partitions of rows rows each.
type size struct{ parts, rows int }

func (s size) String() string { return fmt.Sprintf("%d partitions of %d rows", s.parts, s.rows) }

type config struct {
	dsn         string
	sizes       []size
	batch       int
	rate        int
	workers     int
	lockTimeout time.Duration
	rowBound    time.Duration
	// createExtension installs pg_partman in the database when it is not there.
	createExtension bool
	only            string
	out             string
}

func main() {
	var c config
	sizes := flag.String("sizes", "30x100000,10x1000000", "comma-separated fixtures, each PARTITIONSxROWS (rows a partition)")
	flag.StringVar(&c.dsn, "dsn", envOr("BENCH_PG_DSN", os.Getenv("TEST_DATABASE_URL")), "PostgreSQL URL of a database the benchmark may create tables in")
	flag.IntVar(&c.batch, "batch", 1000, "batch size of the table pass (both variants)")
	flag.IntVar(&c.rate, "rate", 100, "foreground transactions per second")
	flag.IntVar(&c.workers, "workers", 4, "foreground connections")
	flag.DurationVar(&c.lockTimeout, "lock-timeout", time.Second, "partitions.lock_timeout of the pass")
	flag.DurationVar(&c.rowBound, "row-bound", 0, "stop the row path after this long and estimate its time to an empty eligible set from its rate (zero: run it to the end)")
	flag.BoolVar(&c.createExtension, "create-extension", true, "CREATE EXTENSION pg_partman in the database when it is not installed")
	flag.StringVar(&c.only, "only", "", "run only the variants whose name contains one of these comma-separated strings")
	flag.StringVar(&c.out, "out", "", "write the markdown report here (default stdout)")
	flag.Parse()
	var err error
	if c.sizes, err = parseSizes(*sizes); err != nil {
		fmt.Fprintln(os.Stderr, "partitions:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	report, err := run(ctx, c, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "partitions:", err)
		stop()
		os.Exit(1)
	}
	if c.out == "" {
		fmt.Print(report)
		return
	}
	if err := os.WriteFile(c.out, []byte(report), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "partitions:", err)
		os.Exit(1)
	}
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func parseSizes(s string) ([]size, error) {
	var out []size
	for _, f := range strings.Split(s, ",") {
		p, r, ok := strings.Cut(strings.TrimSpace(f), "x")
		parts, err1 := strconv.Atoi(p)
		rows, err2 := strconv.Atoi(r)
		if !ok || err1 != nil || err2 != nil || parts < 4 || rows < 2 {
			return nil, fmt.Errorf("size %q: want PARTITIONSxROWS with at least 4 partitions and 2 rows", f)
		}
		out = append(out, size{parts: parts, rows: rows})
	}
	return out, nil
}
