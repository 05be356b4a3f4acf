package ui

import (
	"fmt"
	"strings"
	"time"

	"github.com/retentionkit/retention/passes/ledger"
)

// chart is an SVG chart drawn on the server: bars (one per sweep) or a line (backlog
// samples). Drawing it in Go keeps the page free of a charting library and makes it
// render with scripts off; the numbers are in each bar's or point's title.
type chart struct {
	Width, Height int
	Top           string // the value of the top grid line
	Bars          []bar
	Line          string // SVG polyline points
	HeldLine      string // the held rows, on the backlog chart
	Points        []point
	First, Last   string // the time axis's ends
	Empty         bool
}

type bar struct {
	X, Y, W, H float64
	Title      string
	Failed     bool
}

type point struct {
	X, Y  float64
	Title string
}

const (
	chartW, chartH = 720, 160
	chartPad       = 4
)

// sweepChart draws the rows each finished sweep deleted, oldest on the left; a failed
// sweep's bar is marked.
func sweepChart(runs []ledger.Run) chart {
	c := chart{Width: chartW, Height: chartH, Empty: len(runs) == 0}
	if c.Empty {
		return c
	}
	var top int64
	for _, r := range runs {
		top = max(top, r.RowsDeleted)
	}
	scale := nice(float64(top))
	c.Top = fmt.Sprint(int64(scale))
	slot := float64(chartW) / float64(len(runs))
	for i, r := range runs {
		h := float64(r.RowsDeleted) / scale * (chartH - chartPad)
		h = max(h, 1) // a sweep that deleted nothing still shows it ran
		c.Bars = append(c.Bars, bar{X: float64(i)*slot + slot*0.1, W: slot * 0.8, Y: chartH - h, H: h, Failed: r.State == ledger.Failed,
			Title: fmt.Sprintf("run %d at %s: %d rows, %d batches, %s", r.ID, stamp(r.StartTime), r.RowsDeleted, r.Batches, strPtr(r.StopReason))})
	}
	c.First, c.Last = stamp(runs[0].StartTime), stamp(runs[len(runs)-1].StartTime)
	return c
}

// backlogChart draws the backlog samples over time: the rows a sweep could delete, and
// beside them the rows held (block children, quarantine), on one scale.
func backlogChart(samples []ledger.BacklogSample) chart {
	c := chart{Width: chartW, Height: chartH, Empty: len(samples) == 0}
	if c.Empty {
		return c
	}
	var top int64
	for _, s := range samples {
		top = max(top, s.Rows, s.Held)
	}
	scale := nice(float64(top))
	c.Top = fmt.Sprint(int64(scale))
	from, to := samples[0].At, samples[len(samples)-1].At
	span := max(to.Sub(from), time.Second)
	y := func(v int64) float64 { return chartH - float64(v)/scale*(chartH-chartPad) }
	var rows, held []string
	for _, s := range samples {
		x := chartPad + float64(s.At.Sub(from))/float64(span)*(chartW-2*chartPad)
		if len(samples) == 1 {
			x = chartW / 2
		}
		rows = append(rows, fmt.Sprintf("%.1f,%.1f", x, y(s.Rows)))
		held = append(held, fmt.Sprintf("%.1f,%.1f", x, y(s.Held)))
		c.Points = append(c.Points, point{X: x, Y: y(s.Rows), Title: fmt.Sprintf("%s: %d rows deletable, %d held", stamp(s.At), s.Rows, s.Held)})
	}
	c.Line, c.HeldLine = strings.Join(rows, " "), strings.Join(held, " ")
	c.First, c.Last = stamp(from), stamp(to)
	return c
}
