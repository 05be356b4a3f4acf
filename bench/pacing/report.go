package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"time"

	"github.com/retentionkit/retention/core/pacing"
)

func execOut(ctx context.Context, name string, args ...string) ([]byte, error) {
	return exec.CommandContext(ctx, name, args...).CombinedOutput()
}

// loadavg is /proc/loadavg's first three fields.
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:min(3, len(f))], " ")
}

// goal is the bound a pace must keep: the median per-pair p99 ratio.
const goal = 1.25

func writeReport(w *strings.Builder, c config, rs []frontierResult, steps []stepResult, reps []replicaResult, started time.Time, load0, load1 string) {
	fmt.Fprintf(w, "## Pacing (`bench/pacing`)\n\n")
	fmt.Fprintf(w, "Produced by `go run ./bench/pacing -rows %d -rate %d -pairs %d -window %v -gap %v -aftermath=%v -variants %s -step %q -replica %q` on a cluster of its own "+
		"(PostgreSQL, Debian's default configuration), %s, in %v. Load average at the start %s, at the end %s.\n\n",
		c.rows, c.rate, c.pairs, c.window, c.gap, c.aftermath, c.variants, c.stepVariants, c.replicas, started.UTC().Format("2006-01-02 15:04 UTC"), time.Since(started).Round(time.Second), load0, load1)
	fmt.Fprintf(w, "Foreground: pgbench, 4 clients, `-R %d`, each transaction reads, updates and inserts one row of pgbench's own tables "+
		"(scale %d); latency from the scheduled start. Ratio = p99 of the transactions that ended in a draining window ÷ p99 of those in the "+
		"not-draining window just before it; the median and spread are over the pairs. Duty = the share of the draining windows spent inside a batch.", c.rate, c.scale)
	if c.aftermath {
		fmt.Fprint(w, " After each draining window, unmeasured, the table is vacuumed and the cluster checkpointed, so what the window left behind "+
			"is not in the next pair's not-draining window; the aftermath column is how long that took.")
	}
	fmt.Fprint(w, "\n\n")
	fmt.Fprintln(w, "| pace | pairs | rows/s (draining windows) | duty | p99 ratio, median | p25-p75 | min-max | p99 ms not draining / draining (medians) | aftermath s, median | table top-ups | pace changes | adaptive's last batch / pause / baseline |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---|---|---|---:|---:|---|---|")
	bestFixed, bestName := 0.0, ""
	var adaptive *frontierResult
	for i, r := range rs {
		m := median(r.ratios)
		last := "-"
		if r.v.adaptive {
			last = fmt.Sprintf("%d / %v / %.2f ms", r.lastBatch, r.lastDelay.Round(10*time.Microsecond), r.baselineMs)
			if adaptive == nil {
				adaptive = &rs[i]
			}
		} else if m <= goal && r.rate() > bestFixed {
			bestFixed, bestName = r.rate(), r.v.name
		}
		after := "-"
		if len(r.aftermath) > 0 {
			after = fmt.Sprintf("%.1f", median(r.aftermath))
		}
		fmt.Fprintf(w, "| %s | %d | %.0f | %.2f | %.2f | %.2f-%.2f | %.2f-%.2f | %.2f / %.2f | %s | %d | %s | %s |\n", r.v.name, len(r.ratios), r.rate(), r.busy.Seconds()/r.drainTime.Seconds(), m,
			quantile(r.ratios, 0.25), quantile(r.ratios, 0.75), quantile(r.ratios, 0), quantile(r.ratios, 1),
			median(r.idleP99), median(r.drainP99), after, r.refills, reasonList(r.reasons), last)
	}
	fmt.Fprintln(w)
	if adaptive != nil {
		a := adaptive.rate()
		m := median(adaptive.ratios)
		fmt.Fprintf(w, "Adaptive: %.0f rows/s at a median ratio of %.2f (target ≥ 25,000 rows/s at ≤ %.2f: %s). ", a, m, goal, yesNo(a >= 25000 && m <= goal))
		if bestName != "" {
			fmt.Fprintf(w, "Best fixed point within %.2f: %s at %.0f rows/s; adaptive reaches %.2f of it (target ≥ 0.9: %s).\n\n", goal, bestName, bestFixed, a/bestFixed, yesNo(m <= goal && a >= 0.9*bestFixed))
		} else {
			fmt.Fprintf(w, "No fixed point kept the median ratio within %.2f in this run.\n\n", goal)
		}
	}
	writeSignals(w, rs)
	if len(steps) > 0 {
		writeSteps(w, c, steps)
	}
	if len(reps) > 0 {
		fmt.Fprintf(w, "### Replica lag\n\n")
		fmt.Fprintf(w, "A streaming replica (pg_basebackup -R of the cluster, on another port of the same machine) replays while each pace drains for %v under the same load; replay lag as the primary's pg_stat_replication shows it, sampled every 250 ms. `adaptive:100ms` sets `max_replica_lag: 100ms`.\n\n", c.replicaDrain)
		fmt.Fprintln(w, "| pace | rows/s | replay lag max | p99 | samples | back-offs for replica lag |")
		fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|")
		for _, r := range reps {
			fmt.Fprintf(w, "| %s | %.0f | %.3f s | %.3f s | %d | %d |\n", r.v.name, float64(r.rows)/r.elapsed.Seconds(), r.maxLag, r.p99Lag, len(r.lags), r.backoffs)
		}
		fmt.Fprintln(w)
	}
}

func writeSteps(w *strings.Builder, c config, steps []stepResult) {
	fmt.Fprintf(w, "### Step: the foreground triples mid-drain\n\n")
	fmt.Fprintf(w, "%v of drain at `-R %d`; from %v to %v into it a second pgbench at `-R %d` runs beside the first. Phase p99s are divided by the "+
		"same phase of the `none` run (the same timeline, no drain). Back-off: seconds from the step's start until a second's rows fall below half "+
		"the median of the 5 s before; recovery: seconds from the step's end until a second is back at 80%% of it (-1: not within the run).\n\n",
		c.stepDrain, c.rate, c.stepAt, c.stepAt+c.stepFor, 2*c.rate)
	var ref *stepResult
	for i := range steps {
		if steps[i].v.none {
			ref = &steps[i]
		}
	}
	fmt.Fprintln(w, "| pace | rows/s before / step / after | p99 ms before / step / after | ÷ no-drain, same phase | back-off s | recovery s |")
	fmt.Fprintln(w, "|---|---|---|---|---:|---:|")
	for _, s := range steps {
		ratio := "-"
		if ref != nil && !s.v.none {
			ratio = fmt.Sprintf("%.2f / %.2f / %.2f", float64(s.before)/float64(ref.before), float64(s.step)/float64(ref.step), float64(s.post)/float64(ref.post))
		}
		fmt.Fprintf(w, "| %s | %.0f / %.0f / %.0f | %.2f / %.2f / %.2f | %s | %.0f | %.0f |\n", s.v.name, s.rates[0], s.rates[1], s.rates[2],
			ms(s.before), ms(s.step), ms(s.post), ratio, s.backoff, s.recovery)
	}
	fmt.Fprintln(w)
	for _, s := range steps {
		if s.v.none {
			continue
		}
		fmt.Fprintf(w, "%s, per second (rows; foreground p99 ms):", s.v.name)
		for i := range s.rows {
			fmt.Fprintf(w, " %d;%.1f", s.rows[i], ms(s.p99s[i]))
		}
		fmt.Fprintln(w)
		fmt.Fprintln(w)
	}
}

func reasonList(m map[pacing.Reason]int) string {
	if len(m) == 0 {
		return "-"
	}
	var parts []string
	for r, n := range m {
		parts = append(parts, fmt.Sprintf("%s %d", r, n))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

func yesNo(ok bool) string {
	if ok {
		return "met"
	}
	return "not met"
}
