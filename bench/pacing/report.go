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

// harmBound is the median per-pair p99 ratio adaptive pacing must keep while it drains
// at least harmRate rows/s.
const (
	harmBound = 1.5
	harmRate  = 10_000
)

// aaSpread is the run's own noise, from its A/A pairs (neither window draining): a
// median ratio outside [lo, hi] (the A/A pairs' extremes) differs from "no drain" by
// more than two windows with nothing between them do; width (their interquartile
// range) is how far two paces' medians must lie apart to count as different.
type aaSpread struct {
	ok            bool
	lo, hi, width float64
	median        float64
}

func spreadOf(rs []frontierResult) aaSpread {
	for _, r := range rs {
		if r.v.none && len(r.ratios) > 0 {
			return aaSpread{ok: true, lo: quantile(r.ratios, 0), hi: quantile(r.ratios, 1),
				width: quantile(r.ratios, 0.75) - quantile(r.ratios, 0.25), median: median(r.ratios)}
		}
	}
	return aaSpread{}
}

// outside says where a median ratio lies against the A/A pairs' range.
func (a aaSpread) outside(m float64) string {
	switch {
	case !a.ok:
		return "no A/A"
	case m > a.hi:
		return "above"
	case m < a.lo:
		return "below"
	}
	return "within"
}

// bestFixed is the fixed pace of the run (500 rows with no pause aside) with the most
// rows/s at a median ratio within harmBound, or with the lowest ratio when none is.
func bestFixed(rs []frontierResult) (variant, bool) {
	var best *frontierResult
	for i := range rs {
		r := &rs[i]
		if r.v.none || r.v.adaptive || r.v.delay == 0 || len(r.ratios) == 0 {
			continue
		}
		m, within := median(r.ratios), median(r.ratios) <= harmBound
		switch {
		case best == nil:
			best = r
		case within && (median(best.ratios) > harmBound || r.rate() > best.rate()):
			best = r
		case !within && median(best.ratios) > harmBound && m < median(best.ratios):
			best = r
		}
	}
	if best == nil {
		return variant{}, false
	}
	return best.v, true
}

func writeReport(w *strings.Builder, c config, rs []frontierResult, steps []stepResult, reps []replicaResult, started time.Time, load0, load1 string) {
	fmt.Fprintf(w, "## Pacing (`bench/pacing`)\n\n")
	fmt.Fprintf(w, "Produced by `go run ./bench/pacing -rows %d -rate %d -pairs %d -window %v -gap %v -aftermath=%v -variants %s -step %q -surges %d -step-pre %v -step-for %v -step-after %v -replica %q` on a cluster of its own "+
		"(PostgreSQL, Debian's default configuration), %s, in %v. Load average at the start %s, at the end %s.\n\n",
		c.rows, c.rate, c.pairs, c.window, c.gap, c.aftermath, c.variants, c.stepVariants, c.surges, c.stepPre, c.stepFor, c.stepAfter, c.replicas, started.UTC().Format("2006-01-02 15:04 UTC"), time.Since(started).Round(time.Second), load0, load1)
	fmt.Fprintf(w, "Foreground: pgbench, 4 clients, `-R %d`, each transaction reads, updates and inserts one row of pgbench's own tables "+
		"(scale %d); latency from the scheduled start. Ratio = p99 of the transactions that ended in a draining window ÷ p99 of those in the "+
		"not-draining window just before it; the median and spread are over the pairs. `none` runs the same pairs with neither window draining "+
		"(A/A): its ratios are this run's noise, and the A/A column says whether a pace's median lies above, within or below their range. "+
		"Duty = the share of the draining windows spent inside a batch.", c.rate, c.scale)
	if c.aftermath {
		fmt.Fprint(w, " After each draining window, unmeasured, the table is vacuumed and the cluster checkpointed, so what the window left behind "+
			"is not in the next pair's not-draining window; the aftermath column is how long that took.")
	}
	fmt.Fprint(w, "\n\n")
	aa := spreadOf(rs)
	fmt.Fprintln(w, "| pace | pairs | rows/s (draining windows) | duty | p99 ratio, median | p25-p75 | min-max | against A/A | p99 ms not draining / draining (medians) | aftermath s, median | table top-ups | pace changes | adaptive's last batch / pause / baseline |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---|---|---|---|---:|---:|---|---|")
	for _, r := range rs {
		m := median(r.ratios)
		last := "-"
		if r.v.adaptive {
			last = fmt.Sprintf("%d / %v / %.2f ms", r.lastBatch, r.lastDelay.Round(10*time.Microsecond), r.baselineMs)
		}
		after := "-"
		if len(r.aftermath) > 0 {
			after = fmt.Sprintf("%.1f", median(r.aftermath))
		}
		against := aa.outside(m)
		if r.v.none {
			against = "(A/A)"
		}
		duty := 0.0
		if r.drainTime > 0 {
			duty = r.busy.Seconds() / r.drainTime.Seconds()
		}
		fmt.Fprintf(w, "| %s | %d | %.0f | %.2f | %.2f | %.2f-%.2f | %.2f-%.2f | %s | %.2f / %.2f | %s | %d | %s | %s |\n", r.v.name, len(r.ratios), r.rate(), duty, m,
			quantile(r.ratios, 0.25), quantile(r.ratios, 0.75), quantile(r.ratios, 0), quantile(r.ratios, 1), against,
			median(r.idleP99), median(r.drainP99), after, r.refills, reasonList(r.reasons), last)
	}
	fmt.Fprintln(w)
	writeJudgement(w, rs, aa)
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

// writeJudgement states the frontier targets for each adaptive variant: the
// harm bound, and that no fixed pace dominates it by more than the A/A spread.
func writeJudgement(w *strings.Builder, rs []frontierResult, aa aaSpread) {
	if aa.ok {
		fmt.Fprintf(w, "A/A: median %.2f, range %.2f-%.2f, interquartile width %.2f.\n\n", aa.median, aa.lo, aa.hi, aa.width)
	}
	for _, a := range rs {
		if !a.v.adaptive || len(a.ratios) == 0 {
			continue
		}
		m := median(a.ratios)
		fmt.Fprintf(w, "%s: %.0f rows/s at a median ratio of %.2f (%s the A/A range). Harm bound (≤ %.2f while draining ≥ %d rows/s): %s. ",
			a.v.name, a.rate(), m, aa.outside(m), harmBound, harmRate, yesNo(m <= harmBound && a.rate() >= harmRate))
		var dominators []string
		for _, f := range rs {
			if f.v.none || f.v.adaptive || len(f.ratios) == 0 {
				continue
			}
			if f.rate() > a.rate() && median(f.ratios) < m-aa.width {
				dominators = append(dominators, fmt.Sprintf("%s (%.0f rows/s at %.2f)", f.v.name, f.rate(), median(f.ratios)))
			}
		}
		if len(dominators) == 0 {
			fmt.Fprintf(w, "Not dominated: no fixed pace drained more at a median ratio lower by more than the A/A width (%.2f).\n\n", aa.width)
		} else {
			fmt.Fprintf(w, "Dominated by %s.\n\n", strings.Join(dominators, ", "))
		}
	}
}

func writeSteps(w *strings.Builder, c config, steps []stepResult) {
	fmt.Fprintf(w, "### Step: the foreground triples, %d times in one run\n\n", c.surges)
	fmt.Fprintf(w, "Each cycle: %v at `-R %d`, then %v with a second pgbench at `-R %d` beside the first (the foreground triples), then %v at `-R %d` "+
		"again; between cycles the drain is held back (as for a slot) while its table is topped up if the next cycle could run it dry. "+
		"Rates are read in %v bins. Cut: seconds from the surge's start to the end of the first bin below half the drain's rate before it "+
		"(the median of the bins of the window's second half); back: seconds from the surge's end to the end of the first bin at 80%% of it "+
		"(never: counted as the window plus a second in the medians). The surge's p99 is divided by the same surge's p99 in the `none` run (the same timeline, no drain). "+
		"Medians over the surges, min-max beside them.\n\n", c.stepPre, c.rate, c.stepFor, 2*c.rate, c.stepAfter, c.rate, stepBin)
	var ref *stepResult
	for i := range steps {
		if steps[i].v.none {
			ref = &steps[i]
		}
	}
	fmt.Fprintln(w, "| pace | surges | rows/s before / during | cut s, median (min-max) | back s, median (min-max) | surge p99 ms, median | ÷ no-drain surge p99, median (min-max) | top-ups |")
	fmt.Fprintln(w, "|---|---:|---|---|---|---:|---|---:|")
	for _, s := range steps {
		var pre, during, cut, back, p99s, ratios []float64
		for i, x := range s.surges {
			pre, during, p99s = append(pre, x.pre), append(during, x.during), append(p99s, ms(x.p99))
			cut, back = append(cut, orNever(x.backoff, c.stepFor)), append(back, orNever(x.recovery, c.stepAfter))
			if ref != nil && i < len(ref.surges) && ref.surges[i].p99 > 0 {
				ratios = append(ratios, float64(x.p99)/float64(ref.surges[i].p99))
			}
		}
		if s.v.none {
			fmt.Fprintf(w, "| none | %d | - | - | - | %.2f (%.2f-%.2f) | (reference) | - |\n", len(s.surges), median(p99s), quantile(p99s, 0), quantile(p99s, 1))
			continue
		}
		fmt.Fprintf(w, "| %s | %d | %.0f / %.0f | %s | %s | %.2f | %s | %d |\n", s.v.name, len(s.surges), median(pre), median(during),
			spread(cut), spread(back), median(p99s), spread(ratios), s.refills)
	}
	fmt.Fprintln(w)
	if ref != nil && len(ref.surges) > 1 {
		var ps []float64
		for _, x := range ref.surges {
			ps = append(ps, ms(x.p99))
		}
		m := median(ps)
		fmt.Fprintf(w, "The `none` run's own surges (A/A): their p99 ranged %.2f-%.2f times its median surge p99, the noise any ratio above carries.\n\n", quantile(ps, 0)/m, quantile(ps, 1)/m)
	}
	for _, s := range steps {
		if len(s.timeline) == 0 {
			continue
		}
		fmt.Fprintf(w, "%s, first cycle, per %v (rows/s; foreground p99 ms): %s\n\n", s.v.name, stepBin, strings.Join(s.timeline, " "))
	}
}

// orNever turns "never" (-1) into "more than the window" for the medians: a surge never
// cut counts as later than every surge that was.
func orNever(x float64, window time.Duration) float64 {
	if x < 0 {
		return window.Seconds() + 1
	}
	return x
}

// spread is "median (min-max)".
func spread(xs []float64) string {
	if len(xs) == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f (%.2f-%.2f)", median(xs), quantile(xs, 0), quantile(xs, 1))
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
