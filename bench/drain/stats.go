package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// result is one timed drain.
type result struct {
	rows     int64
	elapsed  time.Duration
	p50, p99 time.Duration // foreground latency during the drain; zero when not measured
}

func (r result) rate() float64 { return float64(r.rows) / r.elapsed.Seconds() }

// spread is a median with its min and max.
type spread struct{ med, lo, hi float64 }

func spreadOf(xs []float64) spread {
	if len(xs) == 0 {
		return spread{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return spread{med: s[len(s)/2], lo: s[0], hi: s[len(s)-1]}
}

func (s spread) format(unit string, digits int) string {
	return fmt.Sprintf("%.*f%s (%.*f-%.*f)", digits, s.med, unit, digits, s.lo, digits, s.hi)
}

func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(p * float64(len(sorted)-1))
	return sorted[i]
}

func filterVariants(c config, vs []variant) []variant {
	var out []variant
	for _, v := range vs {
		if c.selected(v) {
			out = append(out, v)
		}
	}
	return out
}

// ratios returns, per repetition of variant i, its rate and its rate as a share of the
// plain loop at the same batch size (nil when there is none) and of the unbounded DELETE
// (the last variant).
func ratios(variants []variant, results [][]result, i int) (rates, vsPlain, vsUnbounded []float64) {
	unbounded := results[len(results)-1]
	var plain []result
	for j, v := range variants {
		if strings.HasPrefix(v.name, "same pass") && v.batch == variants[i].batch {
			plain = results[j]
		}
	}
	for rep, r := range results[i] {
		rates = append(rates, r.rate())
		vsUnbounded = append(vsUnbounded, r.rate()/unbounded[rep].rate())
		if plain != nil {
			vsPlain = append(vsPlain, r.rate()/plain[rep].rate())
		}
	}
	return rates, vsPlain, vsUnbounded
}

// batchAndPlain formats the batch column and the plain-loop ratio column.
func batchAndPlain(v variant, vsPlain []float64) (batch, plain string) {
	batch, plain = "-", "-"
	if v.batch > 0 {
		batch = strconv.Itoa(v.batch)
	}
	if len(vsPlain) > 0 {
		plain = spreadOf(vsPlain).format("", 2)
	}
	return batch, plain
}
