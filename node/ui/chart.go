package ui

import (
	"fmt"
	"strings"
	"time"

	"github.com/retentionkit/retention/passes/ledger"
)

// chart is an SVG chart drawn on the server: bars (one per sweep) or a line (backlog
// samples). Drawing it in Go keeps the page free of a charting library and makes it
// render with scripts off. The y-axis is labelled with its unit and three round values,
// and the chart's figures are also printed beside it (Figures, Values), so reading a
// number never needs a mouse over a bar.
type chart struct {
	Width, Height int
	Top           string // the value of the top grid line
	YLabel        string // what the y-axis counts
	Ticks         []tick
	PlotLeft      float64 // where the plot starts, right of the tick labels
	TickX, LabelY float64 // where the tick labels end, and the axis title's middle
	Bars          []bar
	Line          string // SVG polyline points
	HeldLine      string // the held rows, on the backlog chart
	Points        []point
	First, Last   string // the time axis's ends
	Empty         bool
	ID            string // the figure's id: sweeps-chart or backlog-chart
	Failed        int    // the failed sweeps among the bars
	// Figures are the chart's numbers in short (last, largest, total...) over every sweep
	// or sample, shown under it; Values are every bar's or drawn point's numbers, shown
	// on demand (a refresh every few seconds must not carry 48 hours of samples).
	Figures []figure
	Values  []string
	// Drawn and Of say how many samples the line drew of how many (a long history is
	// drawn with a few hundred points; the figures use them all).
	Drawn, Of int
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

// tick is a labelled grid line of the y-axis.
type tick struct {
	Y     float64
	Label string
}

// figure is one of a chart's numbers printed beside it.
type figure struct {
	Label, Value string
}

const (
	chartW, chartH = 720, 180
	chartLeft      = 76 // room for the tick labels (100,000) and the axis title left of them
	chartTopPad    = 10 // the top tick's label is not cut
	chartBottomPad = 4
	plotH          = chartH - chartTopPad - chartBottomPad
	plotW          = chartW - chartLeft - 4
	// chartMaxPoints bounds the points a backlog line draws: 48 hours of samples taken at
	// every sweep would otherwise put thousands of circles on the page.
	chartMaxPoints = 240
)

// yOf is where value v sits on a plot whose top grid line is scale.
func yOf(v, scale float64) float64 { return chartTopPad + plotH - v/scale*plotH }

// axis labels the y-axis at 0, half and the top line.
func axis(scale float64) []tick {
	return []tick{{yOf(0, scale), "0"}, {yOf(scale/2, scale), thousands(int64(scale / 2))}, {yOf(scale, scale), thousands(int64(scale))}}
}

// sweepChart draws the rows each finished sweep deleted, oldest on the left; a failed
// sweep's bar is marked.
func sweepChart(runs []ledger.Run) chart {
	c := chart{Width: chartW, Height: chartH, PlotLeft: chartLeft, TickX: chartLeft - 6, LabelY: chartH / 2, YLabel: "rows deleted", ID: "sweeps", Empty: len(runs) == 0}
	if c.Empty {
		return c
	}
	var top, total int64
	failed := 0
	for _, r := range runs {
		top = max(top, r.RowsDeleted)
		total += r.RowsDeleted
		if r.State == ledger.Failed {
			failed++
		}
	}
	scale := nice(float64(top))
	c.Top, c.Ticks = fmt.Sprint(int64(scale)), axis(scale)
	slot := float64(plotW) / float64(len(runs))
	for i, r := range runs {
		h := float64(r.RowsDeleted) / scale * plotH
		h = max(h, 1) // a sweep that deleted nothing still shows it ran
		title := fmt.Sprintf("run %d at %s: %d rows, %d batches, %s", r.ID, stamp(r.StartTime), r.RowsDeleted, r.Batches, strPtr(r.StopReason))
		c.Bars = append(c.Bars, bar{X: chartLeft + float64(i)*slot + slot*0.1, W: slot * 0.8, Y: chartTopPad + plotH - h, H: h, Failed: r.State == ledger.Failed, Title: title})
		c.Values = append(c.Values, title)
	}
	last := runs[len(runs)-1]
	c.Figures = []figure{
		{"last sweep", thousands(last.RowsDeleted) + " rows"},
		{"largest", thousands(top) + " rows"},
		{"total", fmt.Sprintf("%s rows in %d sweeps", thousands(total), len(runs))},
		{"failed", fmt.Sprint(failed)},
	}
	c.Failed = failed
	c.First, c.Last = stamp(runs[0].StartTime), stamp(last.StartTime)
	return c
}

// backlogChart draws the backlog samples over time: the rows a sweep could delete, and
// beside them the rows held (block children, quarantine), on one scale.
func backlogChart(samples []ledger.BacklogSample) chart {
	c := chart{Width: chartW, Height: chartH, PlotLeft: chartLeft, TickX: chartLeft - 6, LabelY: chartH / 2, YLabel: "rows", ID: "backlog", Empty: len(samples) == 0}
	if c.Empty {
		return c
	}
	var top, highest int64
	lowest := samples[0].Rows
	for _, s := range samples {
		top = max(top, s.Rows, s.Held)
		highest, lowest = max(highest, s.Rows), min(lowest, s.Rows)
	}
	scale := nice(float64(top))
	c.Top, c.Ticks = fmt.Sprint(int64(scale)), axis(scale)
	from, to := samples[0].At, samples[len(samples)-1].At
	span := max(to.Sub(from), time.Second)
	drawn := thin(samples, chartMaxPoints)
	c.Drawn, c.Of = len(drawn), len(samples)
	var rows, held []string
	for _, s := range drawn {
		x := chartLeft + float64(s.At.Sub(from))/float64(span)*plotW
		if len(samples) == 1 {
			x = chartLeft + plotW/2
		}
		rows = append(rows, fmt.Sprintf("%.1f,%.1f", x, yOf(float64(s.Rows), scale)))
		held = append(held, fmt.Sprintf("%.1f,%.1f", x, yOf(float64(s.Held), scale)))
		title := fmt.Sprintf("%s: %d rows deletable, %d held", stamp(s.At), s.Rows, s.Held)
		c.Points = append(c.Points, point{X: x, Y: yOf(float64(s.Rows), scale), Title: title})
		c.Values = append(c.Values, title)
	}
	c.Line, c.HeldLine = strings.Join(rows, " "), strings.Join(held, " ")
	last := samples[len(samples)-1]
	c.Figures = []figure{
		{"now", fmt.Sprintf("%s deletable, %s held", thousands(last.Rows), thousands(last.Held))},
		{"highest", thousands(highest) + " deletable"},
		{"lowest", thousands(lowest) + " deletable"},
		{"samples", fmt.Sprint(len(samples))},
	}
	c.First, c.Last = stamp(from), stamp(to)
	return c
}

// thin keeps at most n samples, evenly spaced, always the first and the last.
func thin(s []ledger.BacklogSample, n int) []ledger.BacklogSample {
	if len(s) <= n {
		return s
	}
	out := make([]ledger.BacklogSample, 0, n)
	for i := range n - 1 {
		out = append(out, s[i*(len(s)-1)/(n-1)])
	}
	return append(out, s[len(s)-1])
}

// thousands writes n with a comma every three digits (12,345), as the axis and the
// figures show it.
func thousands(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteRune(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
