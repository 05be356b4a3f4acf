// Command drain measures how fast a table pass drains a large backlog, beside the same
// SQL in a plain loop, the slower batch shapes, and one unbounded DELETE, on PostgreSQL
// under a fixed-rate OLTP load (pgbench), and on SQLite. It writes a markdown report.
//
//	go run ./bench/drain -out /tmp/drain.md            # what make bench runs
//
// It needs PostgreSQL (-admin-dsn, a superuser that may create databases) and pgbench on
// the PATH; it creates and drops the databases retention_bench_tpl and retention_bench
// (and the ledger's; -db-prefix renames them all).
package main

import (
	"context"
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"time"
)

type config struct {
	adminDSN   string
	rows       int
	reps       int
	rate       int
	out        string
	sqliteDir  string
	skipPG     bool
	only       string
	ledgerOnly bool
	profile    string
	dbPrefix   string
	heapRows   []int
	skipLedger bool
	skipSQLite bool
}

func main() {
	var c config
	flag.StringVar(&c.adminDSN, "admin-dsn", envOr("BENCH_ADMIN_DSN", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"), "PostgreSQL DSN of a user that may create databases")
	flag.IntVar(&c.rows, "rows", 1_000_000, "rows in the table; 90% are expired")
	flag.IntVar(&c.reps, "reps", 3, "repetitions of every variant (the report shows medians)")
	flag.IntVar(&c.rate, "rate", 300, "OLTP load in transactions per second (pgbench -R)")
	flag.StringVar(&c.out, "out", "", "write the markdown report here (default stdout)")
	flag.StringVar(&c.sqliteDir, "sqlite-dir", os.TempDir(), "where the SQLite databases go")
	flag.BoolVar(&c.skipPG, "skip-postgres", false, "measure SQLite only")
	flag.BoolVar(&c.ledgerOnly, "ledger-only", false, "measure only the ledger's metadata cleanup (PostgreSQL)")
	flag.StringVar(&c.only, "only", "", "run only the variants whose name contains this (the plain loop and unbounded DELETE always run: the ratios need them)")
	flag.StringVar(&c.dbPrefix, "db-prefix", "retention_bench", "name of the bench database; its template and the ledger's take this prefix")
	heapRows := flag.String("heap-rows", "", "measure only the peak heap of draining tables of these sizes (comma-separated row counts), on PostgreSQL")
	flag.BoolVar(&c.skipLedger, "skip-ledger", false, "leave out the ledger's metadata cleanup")
	flag.BoolVar(&c.skipSQLite, "skip-sqlite", false, "leave out SQLite")
	flag.StringVar(&c.profile, "cpuprofile", "", "write a CPU profile of the whole run here")
	flag.Parse()
	// The driver's default read timeout (10s) is shorter than a template build or a
	// CHECKPOINT on a busy machine.
	if u, err := url.Parse(c.adminDSN); err == nil && u.Query().Get("read_timeout") == "" {
		c.adminDSN = withQuery(c.adminDSN, "read_timeout", "30m")
	}
	if *heapRows != "" {
		rows, err := parseRows(*heapRows)
		if err != nil {
			fmt.Fprintln(os.Stderr, "drain:", err)
			os.Exit(2)
		}
		c.heapRows = rows
	}
	if c.profile != "" {
		f, err := os.Create(c.profile)
		if err == nil && pprof.StartCPUProfile(f) == nil {
			defer pprof.StopCPUProfile()
		}
	}
	// Every variant gets this cancellable context, as a service's own loop would: the
	// drivers watch a cancellable context on every statement, and that cost belongs to any
	// loop that can be stopped, with or without the runtime.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, c); err != nil {
		fmt.Fprintln(os.Stderr, "drain:", err)
		stop()
		os.Exit(1)
	}
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func run(ctx context.Context, c config) error {
	var report strings.Builder
	var args []string
	for i := 1; i < len(os.Args); i++ {
		if os.Args[i] == "-out" || os.Args[i] == "-cpuprofile" {
			i++ // where the report goes is not part of what was measured
			continue
		}
		args = append(args, os.Args[i])
	}
	command := "go run ./bench/drain " + strings.Join(args, " ")
	if len(c.heapRows) > 0 {
		fmt.Fprintf(&report, "## Memory while draining\n\nProduced by `%s` on %s: median of %d runs (min-max).\n\n",
			strings.TrimSpace(command), time.Now().UTC().Format("2006-01-02"), c.reps)
		if err := heapReport(ctx, c, &report); err != nil {
			return err
		}
		return writeReport(c, report.String())
	}
	fmt.Fprintf(&report, "## Draining a backlog\n\nProduced by `%s` on %s: %d rows, 90%% expired, median of %d runs (min-max).\n\n",
		strings.TrimSpace(command), time.Now().UTC().Format("2006-01-02"), c.rows, c.reps)
	if c.ledgerOnly {
		if err := ledgerReport(ctx, c, &report); err != nil {
			return err
		}
		return writeReport(c, report.String())
	}
	if !c.skipPG {
		if err := postgresReport(ctx, c, &report); err != nil {
			fmt.Fprintf(&report, "PostgreSQL part not run: %v\n\n", err)
			fmt.Fprintln(os.Stderr, "drain: postgres:", err)
		}
		if !c.skipLedger {
			if err := ledgerReport(ctx, c, &report); err != nil {
				fmt.Fprintf(&report, "Ledger cleanup part not run: %v\n\n", err)
				fmt.Fprintln(os.Stderr, "drain: ledger:", err)
			}
		}
	}
	if c.skipSQLite {
		return writeReport(c, report.String())
	}
	if err := sqliteReport(ctx, c, &report); err != nil {
		return err
	}
	return writeReport(c, report.String())
}

func writeReport(c config, report string) error {
	if c.out == "" {
		fmt.Print(report)
		return nil
	}
	return os.WriteFile(c.out, []byte(report), 0o644)
}

// selected reports whether a variant runs under -only.
func (c config) selected(v variant) bool {
	return c.only == "" || strings.Contains(v.name, c.only) || strings.HasPrefix(v.name, "same pass") || v.batch == 0
}
