package main

import (
	"fmt"
	"slices"
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
