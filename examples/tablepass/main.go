// Command tablepass is a service's retention of its sessions table, declared as a table
// pass, and main_test.go is how the service tests it: the real pass on the real
// runtime over throwaway SQLite and PostgreSQL databases, seeded on both sides of the
// cutoff with passes/passtest, run with actortest.SweepOnce, and asserted key by key.
//
// Run on a database, it checks the table against the declaration and reports what a
// sweep would delete now, deleting nothing:
//
//	go run ./examples/tablepass -db app.db
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/retentionkit/retention/passes"
)

// Name is the pass's name.
const Name = "expired-sessions"

// Spec declares which sessions expire: browser and API sessions, by when they were last
// seen (unix seconds). Service sessions are kept whatever their age: the service's
// own jobs use them.
func Spec() passes.TableSpec {
	return passes.TableSpec{
		Table: "sessions", Key: "id", Timestamp: "last_seen", TimestampFormat: passes.TimestampUnixSeconds,
		Filter: &passes.Filter{Column: "kind", In: []any{"web", "api"}},
	}
}

// Options are the pass's retention and pacing: thirty days, batches of 100 with a pause
// between them, at most 50 batches a sweep.
func Options() passes.Options {
	opts := passes.DefaultOptions()
	opts.RetentionPeriod = passes.Retain(30 * 24 * time.Hour)
	opts.BatchSize = 100
	opts.BatchDelay = 20 * time.Millisecond
	opts.MaxBatchesPerSweep = 50
	return opts
}

func main() {
	path := flag.String("db", "app.db", "the service's SQLite database")
	flag.Parse()
	ctx := context.Background()
	db, err := passes.OpenExisting(ctx, passes.DriverSQLite, *path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "tablepass:", err)
		os.Exit(1)
	}
	defer db.Close()
	tbl, err := passes.NewTable(db, Name, Spec())
	if err == nil {
		err = dryRun(ctx, os.Stdout, tbl, time.Now())
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "tablepass:", err)
		os.Exit(1)
	}
}

// dryRun checks the table against the declaration and prints what a sweep at now
// would delete.
func dryRun(ctx context.Context, out io.Writer, tbl *passes.Table, now time.Time) error {
	check := tbl.ValidateStartup(ctx)
	if check.Failed() {
		return errors.New(check.Message())
	}
	for _, w := range check.Warnings() {
		fmt.Fprintln(out, "warning:", w)
	}
	res, err := tbl.DryRun(ctx, Options().Cutoff(now))
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%s: a sweep now would delete %d rows\n", tbl.Name(), res.Eligible)
	return nil
}
