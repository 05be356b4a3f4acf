package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/retentionkit/retention/multinode/harness"
)

// drainVariant is one way of draining the backlog.
type drainVariant struct {
	name    string
	members int // 0: a single node outside cluster mode
	helpers int
}

var drainVariants = []drainVariant{
	{name: "single node, cluster mode off", members: 0},
	{name: "1 member", members: 1},
	{name: "2 members", members: 2},
	{name: "3 members", members: 3},
	{name: "3 members, drain_helpers 2", members: 3, helpers: 2},
}

// drainPasses drains in 2,000-row batches, ending a sweep every 50 batches with work
// remaining (which is when drain helpers fan out), back to back.
var drainPasses = harness.PassOptions{BatchSize: 2000, MaxBatchesPerSweep: 50, SweepInterval: 500 * time.Millisecond}

// drainRates drains one backlog of c.rows expired rows with each variant, about half
// c.reps times (an odd number, so the median is a run), from a fresh seed each time, and reports the median rate from the first
// batch's commit to the last's and the median wall time from the first process's start
// until nothing expired is left.
func (b *bench) drainRates(ctx context.Context, report *strings.Builder) error {
	reps := b.c.reps/2 | 1
	rows := b.c.rows * 70 / 54 // nine in ten rows are old and six in seven of those done
	fmt.Fprintf(report, "### Draining one backlog\n\nOne table of %d rows, %d of them expired, drained by one pass "+
		"(2,000-row batches, 50 per sweep, sweeps 500 ms apart) with three cluster-wide slots; median of %d runs each, from a fresh seed. "+
		"*Rate* is rows over the time from the first batch's commit to the last's; *wall* is from the first process's start until no expired row is left.\n\n",
		rows, b.c.rows, reps)
	fmt.Fprintln(report, "| variant | rows/s (median) | rows/s (min–max) | wall (median) | sessions that deleted (pooled connections, most in a run) |")
	fmt.Fprintln(report, "| --- | --- | --- | --- | --- |")
	for _, v := range drainVariants {
		var rates []float64
		var walls []time.Duration
		sessions := int64(0)
		for range reps {
			rate, wall, s, err := b.drainOnce(ctx, v, rows)
			if err != nil {
				return fmt.Errorf("%s: %w", v.name, err)
			}
			rates, walls, sessions = append(rates, rate), append(walls, wall), max(sessions, s)
		}
		w := spreadOf(walls)
		lo, hi := rates[0], rates[0]
		for _, r := range rates {
			lo, hi = min(lo, r), max(hi, r)
		}
		fmt.Fprintf(report, "| %s | %.0f | %.0f–%.0f | %v | %d |\n", v.name, median(rates), lo, hi, w.med.Round(10*time.Millisecond), sessions)
	}
	fmt.Fprintln(report)
	return nil
}

func (b *bench) drainOnce(ctx context.Context, v drainVariant, rows int) (float64, time.Duration, int64, error) {
	table := harness.Table{Name: "backlog", Rows: rows}
	var began time.Time
	var stop func()
	if v.members == 0 {
		if err := b.db.Reset(ctx); err != nil {
			return 0, 0, 0, err
		}
		if err := b.db.Seed(ctx, table); err != nil {
			return 0, 0, 0, err
		}
		path := filepath.Join(b.dir, fmt.Sprintf("single-%d.yaml", time.Now().UnixNano()))
		if err := harness.WriteConfig(path, harness.SingleConfigYAML(b.db.DSN, 3, harness.PassYAML(table.Name, drainPasses))); err != nil {
			return 0, 0, 0, err
		}
		began = time.Now()
		n, err := harness.StartNode("single", b.bin, path, path+".log")
		if err != nil {
			return 0, 0, 0, err
		}
		stop = n.Kill
	} else {
		f, err := b.newFleet(ctx, fmt.Sprintf("drain%d-%d", v.members, v.helpers), []harness.Table{table},
			harness.ClusterOptions{MaxConcurrentDeletes: 3, NodeMaxConcurrentDeletes: 3, DrainHelpers: v.helpers}, drainPasses, "")
		if err != nil {
			return 0, 0, 0, err
		}
		began = time.Now()
		if _, err := f.StartN(ctx, v.members); err != nil {
			f.stop(ctx)
			return 0, 0, 0, err
		}
		stop = func() { f.stop(ctx) }
	}
	defer stop()
	var wall time.Duration
	if err := harness.Poll(ctx, 10*time.Minute, "the backlog drained", func() (bool, error) {
		n, err := b.db.Remaining(ctx, table.Name)
		wall = time.Since(began)
		return n == 0, err
	}); err != nil {
		return 0, 0, 0, err
	}
	d, err := b.db.Drain(ctx, table.Name)
	if err != nil {
		return 0, 0, 0, err
	}
	k, err := b.db.Keep(ctx, table.Name)
	if err != nil {
		return 0, 0, 0, err
	}
	if !k.OK() {
		return 0, 0, 0, fmt.Errorf("keep-set broken: %s", k)
	}
	return d.Rate(), wall, d.Sessions, nil
}
