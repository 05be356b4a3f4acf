// Command pacing measures what pacing costs the live workload: the project's table pass
// on its runtime drains a 1,000,000-row table while pgbench runs a fixed-rate OLTP load
// on other tables of the same database, at several fixed (batch, pause) points and under
// the adaptive controller with its defaults. The foreground p99 is compared in
// alternating windows (draining, not draining), pair by pair, because on a shared
// machine one window's p99 swings by several times. A step test triples the foreground
// mid-drain; a replica test drains with a streaming replica attached. It writes a
// markdown report.
//
//	go run ./bench/pacing -out /tmp/pacing.md     # what make bench runs
//
// It needs root (it creates its own PostgreSQL clusters with pg_createcluster, and a
// replica with pg_basebackup run as the postgres user), PostgreSQL's server packages and
// pgbench. The clusters are dropped at the end.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"
	"time"

	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/dbtest/pgcluster"
)

var interrupt = os.Interrupt

type config struct {
	rows, rate, scale, accounts, pairs int
	window, gap                        time.Duration
	aftermath, signals                 bool
	variants, stepVariants, replicas   string
	stepPre, stepFor, stepAfter        time.Duration
	surges, stepRows                   int
	replicaDrain                       time.Duration
	out                                string
	loadDSN                            string
}

func main() {
	var c config
	flag.IntVar(&c.rows, "rows", 1_000_000, "rows in the drained table; 90% expired (topped up when a variant would run out)")
	flag.IntVar(&c.rate, "rate", 500, "foreground load in transactions per second (pgbench -R); 500 is what a quiet 2-core machine feels tripled without saturating (docs/benchmarks.md, \"The step run at a surge the server feels\")")
	flag.IntVar(&c.scale, "scale", 5, "pgbench scale of the foreground's tables (100,000 accounts each)")
	flag.IntVar(&c.pairs, "pairs", 10, "pairs of windows (not draining, draining) per variant")
	flag.DurationVar(&c.window, "window", 10*time.Second, "length of one window")
	flag.DurationVar(&c.gap, "gap", time.Second, "unmeasured gap after each window")
	flag.BoolVar(&c.aftermath, "aftermath", true, "after each draining window, VACUUM the table and CHECKPOINT (unmeasured) before the gap, so its aftermath does not fall into the next pair's reference window")
	flag.BoolVar(&c.signals, "signals", false, "sample candidate pacing signals beside each variant (a read and a commit probe and the load's own statement times every 100 ms, the load's busy sessions every 20 ms) and tabulate their ratios")
	flag.StringVar(&c.variants, "variants", "none,fixed:500:0s,fixed:100:2ms,fixed:200:5ms,fixed:500:20ms,adaptive,adaptive-commitprobe", "comma-separated: none (A/A pairs: neither window drains), fixed:BATCH:PAUSE, adaptive[:MAXLAG], adaptive-commitprobe[:MAXLAG] (with commit_probe: true), adaptive-nobusy[:MAXLAG] (without the busy-sessions signal), adaptive-commit[:MAXLAG] (a commit as its probe_query); a +durable suffix commits the sweep at synchronous_commit on")
	flag.StringVar(&c.stepVariants, "step", "none,adaptive,fixed:500:0s,best", "step-test variants (none: the reference without draining; best: the fixed pace of the run with the most rows/s at a median ratio within 1.5, else the lowest ratio); empty skips it")
	flag.IntVar(&c.surges, "surges", 5, "surges in each step-test run")
	flag.IntVar(&c.stepRows, "step-rows", 0, "rows in each step-test variant's table at its start (0: four times -rows); an unpaced drain needs its rate x the pre-surge and surge windows to keep deleting through a surge")
	flag.DurationVar(&c.stepPre, "step-pre", 6*time.Second, "the base load's window before each surge")
	flag.DurationVar(&c.stepFor, "step-for", 12*time.Second, "how long each surge keeps the foreground tripled")
	flag.DurationVar(&c.stepAfter, "step-after", 15*time.Second, "the base load's window after each surge, to recover in")
	flag.StringVar(&c.replicas, "replica", "fixed:500:0s,adaptive,adaptive:100ms", "replica-test variants; empty skips it")
	flag.DurationVar(&c.replicaDrain, "replica-drain", 20*time.Second, "length of each replica-test drain")
	flag.StringVar(&c.out, "out", "", "write the markdown report here (default stdout)")
	flag.Parse()
	c.accounts = c.scale * 100_000
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	report, err := run(ctx, c, func(partial string) { c.write(partial) })
	if err != nil {
		fmt.Fprintln(os.Stderr, "pacing:", err)
		os.Exit(1)
	}
	if c.out == "" {
		fmt.Print(report)
		return
	}
	c.write(report)
}

// write puts the report where -out says; the run calls it after every measurement, so
// an interrupted run keeps what it measured.
func (c config) write(report string) {
	if c.out == "" {
		return
	}
	if err := os.WriteFile(c.out, []byte(report), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "pacing:", err)
	}
}

func variants(list string) ([]variant, error) {
	var out []variant
	for _, s := range strings.Split(list, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		v, err := parseVariant(s)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// setupTimeout is the read timeout of the benchmark's connections: building a
// 1,000,000-row table on a busy machine outlasts the driver's default of 10s.
const setupTimeout = "&read_timeout=600s"

func run(ctx context.Context, c config, partial func(string)) (string, error) {
	frontier, err := variants(c.variants)
	if err != nil {
		return "", err
	}
	// "best" is resolved after the frontier; until then it is a placeholder in its place.
	steps, err := variants(strings.ReplaceAll(c.stepVariants, "best", "none"))
	if err != nil {
		return "", err
	}
	bestAt := slices.Index(strings.Split(c.stepVariants, ","), "best")
	replicas, err := variants(c.replicas)
	if err != nil {
		return "", err
	}
	pgcluster.DropAll(primaryOptions.Prefix) // what an interrupted run left, replicas too
	primary, err := pgcluster.Create(primaryOptions)
	if err != nil {
		return "", err
	}
	defer primary.Drop()
	admin, err := passes.Open(ctx, passes.DriverPostgres, primary.DSN("postgres"))
	if err != nil {
		return "", err
	}
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE pacing"); err != nil {
		return "", err
	}
	admin.Close()
	c.loadDSN = primary.DSN("pacing")
	if out, err := execOut(ctx, "pgbench", "-i", "-q", "-s", fmt.Sprint(c.scale), c.loadDSN); err != nil {
		return "", fmt.Errorf("pgbench -i: %w\n%s", err, out)
	}
	db, err := passes.Open(ctx, passes.DriverPostgres, primary.DSN("pacing")+setupTimeout)
	if err != nil {
		return "", err
	}
	defer db.Close()

	started, load0 := time.Now(), loadavg()
	var results []frontierResult
	var stepResults []stepResult
	var replicaResults []replicaResult
	var failures []string
	report := func() string {
		var w strings.Builder
		writeReport(&w, c, results, stepResults, replicaResults, started, load0, loadavg())
		for _, f := range failures {
			fmt.Fprintf(&w, "Not measured: %s\n\n", f)
		}
		return w.String()
	}
	// A measurement that fails (a statement timing out on a busy machine, say) is named in
	// the report; the others still run.
	failed := func(what string, err error) {
		fmt.Fprintf(os.Stderr, "pacing: %s: %v\n", what, err)
		failures = append(failures, fmt.Sprintf("%s (%v)", what, err))
	}
	for _, v := range frontier {
		fmt.Fprintf(os.Stderr, "pacing: frontier %s\n", v.name)
		if r, err := runFrontier(ctx, c, db, v); err != nil {
			failed(v.name, err)
		} else {
			results = append(results, r)
		}
		partial(report())
	}
	if bestAt >= 0 {
		if best, ok := bestFixed(results); ok {
			steps[bestAt] = best
		} else {
			steps = slices.Delete(steps, bestAt, bestAt+1)
			failures = append(failures, "step best (no fixed pace measured)")
		}
	}
	for _, v := range steps {
		fmt.Fprintf(os.Stderr, "pacing: step %s\n", v.name)
		if r, err := runStep(ctx, c, db, v); err != nil {
			failed("step "+v.name, err)
		} else {
			stepResults = append(stepResults, r)
		}
		partial(report())
	}
	if len(replicas) > 0 {
		fmt.Fprintln(os.Stderr, "pacing: creating the replica")
		replica, err := createReplica(ctx, primary)
		if err != nil {
			failed("the replica", err)
			return report(), nil
		}
		defer replica.Drop()
		for _, v := range replicas {
			fmt.Fprintf(os.Stderr, "pacing: replica %s\n", v.name)
			if r, err := runReplica(ctx, c, db, v); err != nil {
				failed("replica "+v.name, err)
			} else {
				replicaResults = append(replicaResults, r)
			}
			partial(report())
		}
	}
	return report(), nil
}
