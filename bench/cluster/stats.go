package main

import (
	"fmt"
	"slices"
	"time"
)

// spread is the median, min and max of a sample.
type spread struct {
	n             int
	min, med, max time.Duration
}

func spreadOf(ds []time.Duration) spread {
	if len(ds) == 0 {
		return spread{}
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + med) / 2
	}
	return spread{n: len(s), min: s[0], med: med, max: s[len(s)-1]}
}

func (s spread) row(what string) string {
	r := func(d time.Duration) time.Duration { return d.Round(time.Millisecond) }
	return fmt.Sprintf("| %s | %v | %v | %v | %d |", what, r(s.med), r(s.min), r(s.max), s.n)
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 0 {
		return (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return s[len(s)/2]
}
