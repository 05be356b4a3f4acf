package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/retentionkit/retention/bench/internal/onesweep"
	"github.com/retentionkit/retention/passes"
)

// variant is one way of purging the expired rows.
type variant struct {
	name string
	// slow: the variant always runs for at most -window (pt-archiver at its defaults
	// commits every row), and its rate is over that window.
	slow bool
	// purge runs the variant for at most bound (zero: to its end).
	purge func(ctx context.Context, c config, db string, s shape, bound time.Duration) (outcome, error)
}

// outcome is one purge as the tool saw it.
type outcome struct {
	elapsed time.Duration
	rows    int64  // rows the tool says it deleted (-1: it does not say)
	note    string // anything the tool printed that the report should keep
	trace   string // how a table pass's batches went (onesweep.Trace), empty for pt-archiver
}

func variants(c config) []variant {
	pt := func(args ...string) func(context.Context, config, string, shape, time.Duration) (outcome, error) {
		return func(ctx context.Context, c config, db string, s shape, bound time.Duration) (outcome, error) {
			if bound > 0 {
				args = append(slices.Clone(args), "--run-time", fmt.Sprintf("%ds", int(bound.Seconds())))
			}
			return ptArchiver(ctx, c, db, s, args...)
		}
	}
	return []variant{
		{name: "retention table pass, batch 500", purge: tablePass(500)},
		{name: "retention table pass, batch 5000", purge: tablePass(5000)},
		// Paced to sit between pt-archiver's own paces: batch 500 every 10 ms is at most
		// 50 batches a second, about what --bulk-delete --limit 500 reached on a quiet
		// machine, so the p99 ratio compares sweeps of a like rate.
		{name: "retention table pass, batch 500, batch_delay 10ms", purge: tablePassPaced(500, 10*time.Millisecond)},
		// Slower fixed paces, for the p99 ratio as a function of the rate: 15 ms is about
		// ten times pt-archiver's default rate (the least the target asks), 40 ms about
		// four times, 100 ms about twice.
		{name: "retention table pass, batch 500, batch_delay 15ms", purge: tablePassPaced(500, 15*time.Millisecond)},
		{name: "retention table pass, batch 500, batch_delay 40ms", purge: tablePassPaced(500, 40*time.Millisecond)},
		{name: "retention table pass, batch 500, batch_delay 100ms", purge: tablePassPaced(500, 100*time.Millisecond)},
		// The controller paces by its probe and its share of the server's time, with no
		// number picked for this machine: what a user gets from pacing: adaptive.
		{name: "retention table pass, batch 500, pacing: adaptive", purge: tablePassAdaptive(500)},
		{name: "pt-archiver --purge (defaults: --limit 1 --txn-size 1)", slow: true, purge: pt()},
		{name: "pt-archiver --purge --limit 500 --commit-each", purge: pt("--limit", "500", "--commit-each")},
		{name: "pt-archiver --purge --bulk-delete --limit 500", purge: pt("--bulk-delete", "--limit", "500")},
	}
}

// boundOf is how long v may run: -window for the slow default of pt-archiver, -bound
// (zero: to the end) for the others.
func (c config) boundOf(v variant) time.Duration {
	if v.slow && (c.bound == 0 || c.window < c.bound) {
		return c.window
	}
	return c.bound
}

// tablePass runs one sweep of a table pass over events, with event_items declared as a
// child, on an actors.Runtime, through the MySQL driver with its defaults; it is timed
// from SweepStarted to SweepDone, as bench/drain times it (onesweep.Run).
func tablePass(batch int) func(context.Context, config, string, shape, time.Duration) (outcome, error) {
	return tablePassPaced(batch, 0)
}

// tablePassPaced is tablePass with a batch_delay of delay between batches.
func tablePassPaced(batch int, delay time.Duration) func(context.Context, config, string, shape, time.Duration) (outcome, error) {
	return withTable(func(ctx context.Context, tbl *passes.Table, s shape, bound time.Duration) (onesweep.Result, error) {
		return onesweep.RunPaced(ctx, tbl, batch, delay, s.cutoff(), bound)
	})
}

// tablePassAdaptive is tablePass with pacing: adaptive. Its clock runs (the
// controller times on it), so its cutoff is the shape's less up to half the 10 s
// between two rows, which splits the rows as the shape's own cutoff does.
func tablePassAdaptive(batch int) func(context.Context, config, string, shape, time.Duration) (outcome, error) {
	return withTable(func(ctx context.Context, tbl *passes.Table, s shape, bound time.Duration) (onesweep.Result, error) {
		return onesweep.RunAdaptive(ctx, tbl, batch, s.cutoff(), rowSpacing/2, bound)
	})
}

// withTable opens the run's database with the MySQL driver at its defaults, builds the
// table pass over events with event_items declared as a child, and times one sweep of it.
func withTable(sweep func(context.Context, *passes.Table, shape, time.Duration) (onesweep.Result, error)) func(context.Context, config, string, shape, time.Duration) (outcome, error) {
	return func(ctx context.Context, c config, dbName string, s shape, bound time.Duration) (outcome, error) {
		db, err := passes.Open(ctx, "mysql", c.dsnFor(dbName))
		if err != nil {
			return outcome{}, err
		}
		defer db.Close()
		tbl, err := passes.NewTable(db, "events", passes.TableSpec{
			Table: "events", Key: "id", Timestamp: "created_at",
			Children: []passes.ChildSpec{{Table: "event_items", ForeignKey: "event_id"}},
		})
		if err != nil {
			return outcome{}, err
		}
		r, err := sweep(ctx, tbl, s, bound)
		return outcome{elapsed: r.Elapsed, rows: r.Rows, trace: r.Trace.String()}, err
	}
}

// ptArchiver runs pt-archiver --purge over events with the benchmark's cutoff and the
// given options, timed from its start to its exit (its Perl start-up, about a tenth of
// a second, included). It connects through an option file, so no password is on its
// command line, and never checks for a newer version (which would call out).
func ptArchiver(ctx context.Context, c config, dbName string, s shape, extra ...string) (outcome, error) {
	cfg, err := gomysql.ParseDSN(c.dsn)
	if err != nil {
		return outcome{}, err
	}
	opt, err := os.CreateTemp("", "ptarchiver-*.cnf")
	if err != nil {
		return outcome{}, err
	}
	defer os.Remove(opt.Name())
	fmt.Fprintf(opt, "[client]\nuser=%s\n", cfg.User)
	if cfg.Passwd != "" {
		fmt.Fprintf(opt, "password=%s\n", cfg.Passwd)
	}
	if cfg.Net == "unix" {
		fmt.Fprintf(opt, "socket=%s\n", cfg.Addr)
	} else {
		host, port, _ := strings.Cut(cfg.Addr, ":")
		fmt.Fprintf(opt, "host=%s\nport=%s\n", host, port)
	}
	if err := opt.Close(); err != nil {
		return outcome{}, err
	}
	args := append([]string{
		"--source", fmt.Sprintf("F=%s,D=%s,t=events", opt.Name(), dbName),
		"--purge", "--where", fmt.Sprintf("created_at < '%s'", s.cutoffSQL()),
		"--no-version-check", "--statistics", "--charset", "utf8mb4",
	}, extra...)
	cmd := exec.CommandContext(ctx, c.ptArchiver, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err = cmd.Run()
	took := time.Since(start)
	if err != nil {
		return outcome{}, fmt.Errorf("pt-archiver %s: %w: %s", strings.Join(extra, " "), err, strings.TrimSpace(out.String()))
	}
	return outcome{elapsed: took, rows: deletedByStatistics(out.String()), note: strings.TrimSpace(out.String())}, nil
}

// deletedByStatistics reads the DELETE count from pt-archiver's --statistics report
// ("Action  Count  Time  Pct" lines, one of them "deleting N ..."), or -1.
func deletedByStatistics(out string) int64 {
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == "deleting" {
			var n int64
			if _, err := fmt.Sscan(f[1], &n); err == nil {
				return n
			}
		}
	}
	return -1
}
