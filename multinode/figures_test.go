//go:build multinode

package multinode

import (
	"fmt"
	"io"
	"slices"
	"sync"
	"time"
)

// figures are the times the scenarios measured, printed at the end of the run (and
// copied into docs/cluster.md, "Tested failures"). They are reports, never assertions.
var figures struct {
	mu   sync.Mutex
	rows []string
	on   string // the database the figures come from, when not PostgreSQL
}

// report records one measured figure of a scenario.
func report(scenario, what string, ds ...time.Duration) {
	figures.mu.Lock()
	defer figures.mu.Unlock()
	if figures.on != "" {
		scenario += " (" + figures.on + ")"
	}
	line := fmt.Sprintf("| %s | %s |", scenario, what)
	if len(ds) > 0 {
		ds = slices.Clone(ds)
		slices.Sort(ds)
		med := ds[len(ds)/2]
		if len(ds)%2 == 0 {
			med = (ds[len(ds)/2-1] + med) / 2
		}
		line = fmt.Sprintf("| %s | %s | %v | %v | %v | %d |", scenario, what,
			ds[0].Round(time.Millisecond), med.Round(time.Millisecond), ds[len(ds)-1].Round(time.Millisecond), len(ds))
	}
	figures.rows = append(figures.rows, line)
}

func printFigures(w io.Writer) {
	figures.mu.Lock()
	defer figures.mu.Unlock()
	if len(figures.rows) == 0 {
		return
	}
	fmt.Fprintln(w, "\nmeasured (min, median, max, count):")
	fmt.Fprintln(w, "| scenario | what | min | median | max | n |")
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- | --- |")
	for _, r := range figures.rows {
		fmt.Fprintln(w, r)
	}
}
