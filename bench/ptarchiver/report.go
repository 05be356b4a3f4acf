package main

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"
)

// spread is a median with its min and max.
type spread struct{ med, lo, hi float64 }

func spreadOf(xs []float64) spread {
	if len(xs) == 0 {
		return spread{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + med) / 2
	}
	return spread{med: med, lo: s[0], hi: s[len(s)-1]}
}

func (s spread) fmt(digits int) string {
	return fmt.Sprintf("%.*f (%.*f-%.*f)", digits, s.med, digits, s.lo, digits, s.hi)
}

// each collects f over a variant's runs.
func each(rs []runResult, f func(runResult) float64) spread {
	var xs []float64
	for _, r := range rs {
		xs = append(xs, f(r))
	}
	return spreadOf(xs)
}

func writeReport(c config, version string, vs []variant, results [][]runResult) string {
	var w strings.Builder
	s := shape{rows: c.rows}
	args := commandArgs()
	fmt.Fprintf(&w, "## MariaDB: a table pass beside pt-archiver\n\n")
	fmt.Fprintf(&w, "Produced by `go run ./bench/ptarchiver%s` on %s UTC against %s, with %s, %d cores: %d rows, %d expired, one child for every %d rows; a foreground of %d transactions/s on %d connections; runs of each variant: %d (median, min-max).\n\n",
		args, time.Now().UTC().Format("2006-01-02 15:04"), version, ptVersion(c), runtime.NumCPU(), c.rows, s.expired(), s.childEvery(), c.rate, c.workers, c.reps)
	var all []runResult
	for _, rs := range results {
		all = append(all, rs...)
	}
	fmt.Fprintf(&w, "Idle foreground (no purge; both windows of every run, %d runs): p50 %s ms, p99 %s ms; without the touches, p99 %s ms. A/A (the second idle window's p99 ÷ the first's): %s. Lock waits counted by the server over the idle windows (other sessions of the server included): %s.\n\n",
		len(all), each(all, func(r runResult) float64 { return ms(r.idle.quantile(0.5)) }).fmt(2),
		each(all, func(r runResult) float64 { return ms(r.idle.quantile(0.99)) }).fmt(2),
		each(all, func(r runResult) float64 { return ms(r.idleOLTP.quantile(0.99)) }).fmt(2),
		each(all, runResult.aa).fmt(2),
		each(all, func(r runResult) float64 { return float64(r.quiet.lockWaits) }).fmt(0))
	fmt.Fprintln(&w, "| variant | rows/s | rows deleted | purge s | foreground p99 ms | p99 ÷ idle p99 | without touches: p99 ÷ idle p99 | lock waits | lock wait ms | deadlocks | foreground errors | keep-set |")
	fmt.Fprintln(&w, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |")
	for i, v := range vs {
		rs := results[i]
		name := v.name
		if b := c.boundOf(v); b > 0 {
			name += fmt.Sprintf(" (stopped after %v unless done)", b)
		}
		fmt.Fprintf(&w, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", name,
			each(rs, runResult.rate).fmt(0),
			each(rs, func(r runResult) float64 { return float64(r.keep.deleted) }).fmt(0),
			each(rs, func(r runResult) float64 { return r.out.elapsed.Seconds() }).fmt(1),
			each(rs, func(r runResult) float64 { return ms(r.drain.quantile(0.99)) }).fmt(2),
			each(rs, runResult.p99Ratio).fmt(2),
			each(rs, runResult.oltpRatio).fmt(2),
			each(rs, func(r runResult) float64 { return float64(r.during.lockWaits) }).fmt(0),
			each(rs, func(r runResult) float64 { return float64(r.during.lockTimeMs) }).fmt(0),
			deadlocks(rs), fgErrors(rs), keepColumn(rs))
	}
	fmt.Fprintln(&w)
	for i, v := range vs {
		for n, r := range results[i] {
			if r.out.rows >= 0 && r.out.rows != r.keep.deleted {
				fmt.Fprintf(&w, "- %s, run %d: the tool reported %d rows deleted, the table lost %d.\n", v.name, n+1, r.out.rows, r.keep.deleted)
			}
		}
	}
	fmt.Fprintln(&w)
	writeServerTable(&w, vs, results)
	for i, v := range vs {
		for n, r := range results[i] {
			if r.out.trace != "" {
				fmt.Fprintf(&w, "- %s, run %d: %s.\n", v.name, n+1, r.out.trace)
			}
		}
	}
	fmt.Fprintln(&w)
	fmt.Fprintln(&w, target(vs, results))
	return w.String()
}

func deadlocks(rs []runResult) string {
	if len(rs) == 0 || !rs[0].during.hasDeadlock {
		return "-"
	}
	return each(rs, func(r runResult) float64 { return float64(r.during.deadlocks) }).fmt(0)
}

// fgErrors lists the foreground's failed transactions during the purge by MySQL error
// number, summed over the runs.
func fgErrors(rs []runResult) string {
	sum := map[int]int{}
	for _, r := range rs {
		for k, v := range r.drain.errs {
			sum[k] += v
		}
	}
	if len(sum) == 0 {
		return "none"
	}
	var keys []int
	for k := range sum {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%d × error %d", sum[k], k))
	}
	return strings.Join(parts, ", ")
}

// keepColumn says, over the runs, whether the keep-set was exact, and where not, what
// was lost or left.
func keepColumn(rs []runResult) string {
	var lost, left, other []string
	exact := 0
	for _, r := range rs {
		if r.keep.exact(r.finished) {
			exact++
		}
		lost = append(lost, fmt.Sprintf("%d/%d", r.keep.revivedLost, r.keep.revived))
		left = append(left, fmt.Sprint(r.keep.expiredLeft))
		if n := r.keep.keptMissing + r.keep.childMissing + r.keep.newMissing + r.keep.orphans; n != 0 {
			other = append(other, fmt.Sprint(n))
		}
	}
	out := fmt.Sprintf("exact in %d of %d; touched rows deleted %s; expired left %s", exact, len(rs), strings.Join(lost, ", "), strings.Join(left, ", "))
	if len(other) > 0 {
		out += "; other rows lost " + strings.Join(other, ", ")
	}
	return out
}

// target judges issue 24's target for each of our batch-500 variants (unpaced, and
// paced by a batch_delay): at least 10× pt-archiver's default rows/s and at least
// --bulk-delete --limit 500's, at no worse a p99 ratio than either, with an exact
// keep-set. Medians of the runs.
func target(vs []variant, results [][]runResult) string {
	find := func(prefix string) []runResult {
		for i, v := range vs {
			if strings.HasPrefix(v.name, prefix) {
				return results[i]
			}
		}
		return nil
	}
	def, bulk := find("pt-archiver --purge (defaults"), find("pt-archiver --purge --bulk-delete")
	var lines []string
	for i, v := range vs {
		if !strings.HasPrefix(v.name, "retention table pass, batch 500") || strings.HasPrefix(v.name, "retention table pass, batch 5000") {
			continue
		}
		if def == nil || bulk == nil {
			break
		}
		lines = append(lines, judge(v.name, results[i], def, bulk))
	}
	if len(lines) == 0 {
		return "Target not judged: a variant it needs did not run."
	}
	return strings.Join(lines, "\n\n")
}

// judge is the target's sentence for one of our variants, ours, against pt-archiver's
// default and --bulk-delete runs.
func judge(name string, ours, def, bulk []runResult) string {
	rate := func(rs []runResult) float64 { return each(rs, runResult.rate).med }
	p99 := func(rs []runResult) float64 { return each(rs, runResult.p99Ratio).med }
	oltp := func(rs []runResult) float64 { return each(rs, runResult.oltpRatio).med }
	exact := true
	for _, r := range ours {
		exact = exact && r.keep.exact(r.finished)
	}
	yes := func(b bool) string {
		if b {
			return "met"
		}
		return "NOT met"
	}
	return fmt.Sprintf("Target (medians), %s: drains %.1f× pt-archiver's default rate (≥ 10×: %s) and %.2f× --bulk-delete --limit 500's (≥ 1×: %s); its p99 ratio %.2f against %.2f and %.2f (no worse than either: %s; without the touches %.2f against %.2f and %.2f: %s); keep-set exact in every run: %s.",
		name, rate(ours)/rate(def), yes(rate(ours) >= 10*rate(def)), rate(ours)/rate(bulk), yes(rate(ours) >= rate(bulk)),
		p99(ours), p99(def), p99(bulk), yes(p99(ours) <= p99(def) && p99(ours) <= p99(bulk)),
		oltp(ours), oltp(def), oltp(bulk), yes(oltp(ours) <= oltp(def) && oltp(ours) <= oltp(bulk)), yes(exact))
}

// ptVersion is the first line pt-archiver --version prints.
func ptVersion(c config) string {
	out, err := exec.Command(c.ptArchiver, "--version").Output()
	if err != nil {
		return "pt-archiver (version unknown)"
	}
	return strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])
}

// commandArgs is the command line as run, without where the report went.
func commandArgs() string {
	var args []string
	for i := 1; i < len(os.Args); i++ {
		if os.Args[i] == "-out" {
			i++
			continue
		}
		if strings.HasPrefix(os.Args[i], "-out=") {
			continue
		}
		args = append(args, os.Args[i])
	}
	if len(args) == 0 {
		return ""
	}
	return " " + strings.Join(args, " ")
}

// writeServerTable is what the host and the server did over the idle windows and over
// the purge, per variant: where a purge's cost to the foreground went (CPU, reads from
// disk, redo written, flushes).
func writeServerTable(w *strings.Builder, vs []variant, results [][]runResult) {
	fmt.Fprintln(w, "What the host and the server did, idle → during the purge (medians, min-max; the host's CPU is of all its cores, the server's counters are global):")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| variant | host CPU busy % | pages read from disk /s | redo KB/s | fsyncs /s |")
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- |")
	pair := func(rs []runResult, f func(counters) float64, digits int) string {
		return each(rs, func(r runResult) float64 { return f(r.quiet) }).fmt(digits) + " → " +
			each(rs, func(r runResult) float64 { return f(r.during) }).fmt(digits)
	}
	for i, v := range vs {
		rs := results[i]
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", v.name,
			pair(rs, counters.cpuShare, 0),
			pair(rs, func(c counters) float64 { return c.perSecond(c.poolReads) }, 0),
			pair(rs, func(c counters) float64 { return c.perSecond(c.logBytes) / 1024 }, 0),
			pair(rs, func(c counters) float64 { return c.perSecond(c.fsyncs) }, 0))
	}
	fmt.Fprintln(w)
}
