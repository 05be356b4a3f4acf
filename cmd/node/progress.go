package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"

	"github.com/retentionkit/retention/actors"
)

// progress shows a sweep's batches: a live bar per pass on a terminal (rows deleted,
// rate, ETA against the dry-run count), plain lines otherwise.
type progress interface {
	batch(e actors.BatchDone)
	passDone(name string)
	wait()
}

// newProgress picks the bars for a terminal (or mode "always") and lines otherwise.
func (n *node) newProgress(ctx context.Context, w io.Writer, mode string, idx []int) progress {
	tty := false
	if f, ok := w.(*os.File); ok {
		tty = isatty.IsTerminal(f.Fd())
	}
	if mode == "never" || (mode == "auto" && !tty) {
		return lines{w}
	}
	opts := []mpb.ContainerOption{mpb.WithOutput(w), mpb.WithWidth(40), mpb.WithRefreshRate(200 * time.Millisecond)}
	if !tty {
		opts = append(opts, mpb.WithAutoRefresh()) // mode "always" on a pipe: render anyway
	}
	p := mpb.NewWithContext(ctx, opts...)
	b := &bars{p: p, bars: map[string]*mpb.Bar{}, totals: map[string]int64{}}
	for _, i := range idx {
		total := int64(0)
		if dry, err := n.tables[i].DryRun(ctx, time.Now().Add(-*n.regs[i].Options.RetentionPeriod)); err == nil {
			total = dry.Eligible
		}
		name := n.regs[i].Name
		b.totals[name] = max(total, 1)
		b.bars[name] = p.AddBar(b.totals[name],
			mpb.PrependDecorators(decor.Name(name, decor.WCSyncSpaceR), decor.CountersNoUnit("%d / %d rows", decor.WCSyncSpace)),
			mpb.AppendDecorators(decor.AverageSpeed(0, "%.0f rows/s", decor.WCSyncSpace), decor.AverageETA(decor.ET_STYLE_GO, decor.WCSyncSpace)))
	}
	return b
}

type lines struct{ w io.Writer }

func (l lines) batch(e actors.BatchDone) {
	fmt.Fprintf(l.w, "%s: batch %d deleted %d rows\n", e.Name, e.Batch, e.Rows)
}
func (lines) passDone(string) {}
func (lines) wait()           {}

type bars struct {
	p      *mpb.Progress
	bars   map[string]*mpb.Bar
	totals map[string]int64 // the dry-run count, raised if more rows turn up
}

func (b *bars) batch(e actors.BatchDone) {
	bar, ok := b.bars[e.Name]
	if !ok {
		return
	}
	// Rows written since the dry run can push past its count: keep the bar open until
	// the pass is done.
	if next := bar.Current() + int64(e.Rows); next >= b.totals[e.Name] {
		b.totals[e.Name] = next + 1
		bar.SetTotal(b.totals[e.Name], false)
	}
	bar.IncrBy(e.Rows)
}

func (b *bars) passDone(name string) {
	if bar, ok := b.bars[name]; ok {
		bar.SetTotal(-1, true)
	}
}

func (b *bars) wait() { b.p.Wait() }
