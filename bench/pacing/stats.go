package main

import (
	"slices"
	"time"
)

// windowLatencies are the latencies of the transactions that ended within [from, to).
func windowLatencies(txns []txn, from, to time.Time) []time.Duration {
	var lats []time.Duration
	for _, t := range txns {
		if !t.at.Before(from) && t.at.Before(to) {
			lats = append(lats, t.lat)
		}
	}
	return lats
}

// p99 of the latencies of the transactions that ended within [from, to), and how many.
func p99(txns []txn, from, to time.Time) (time.Duration, int) {
	lats := windowLatencies(txns, from, to)
	if len(lats) == 0 {
		return 0, 0
	}
	slices.Sort(lats)
	return lats[min(len(lats)-1, len(lats)*99/100)], len(lats)
}

// quantile of xs (nearest rank); xs is not modified.
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

func median(xs []float64) float64 { return quantile(xs, 0.5) }

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
