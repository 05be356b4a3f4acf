package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"regexp"
	"sync"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/sirupsen/logrus"
	"github.com/vbauerster/cupwriter"
	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"

	"github.com/retentionkit/retention/actors"
	rnode "github.com/retentionkit/retention/node"
)

// progress shows a sweep's batches: a live bar per pass on a terminal (rows deleted,
// rate, ETA against the dry-run count), plain lines otherwise.
type progress interface {
	batch(e actors.BatchDone)
	passDone(name string)
	// wait returns once every pass is done and its bar drawn in full.
	wait()
	// stop ends the display at once, done or not, and gives the log its output back.
	stop()
}

const (
	// barWidth is the width of a bar's filler; its decorators come on top.
	barWidth = 40
	// pipeWidth is the line width allowed on a pipe, where no terminal says: wide enough
	// that no line is cut.
	pipeWidth = 1 << 10
	// fallbackColumns and fallbackRows stand in for a pseudo-terminal that reports no
	// size (script run without a terminal of its own, for one).
	fallbackColumns, fallbackRows = 80, 24
)

// newProgress picks the bars for a terminal (or mode "always") and lines otherwise.
// While bars are on a terminal, the log prints above them through the progress
// container, when the log goes to a terminal too. ps are the passes about to be swept.
func newProgress(ctx context.Context, w io.Writer, mode string, log *logrus.Logger, ps []rnode.Pass) progress {
	tty := isTerminal(w)
	if mode == "never" || (mode == "auto" && !tty) {
		return lines{w}
	}
	b := newBars(ctx, w, tty)
	for _, p := range ps {
		estimate := int64(0)
		if p.IsTable() {
			if dry, err := p.Table.DryRun(ctx, p.Options().Cutoff(time.Now())); err == nil {
				estimate = dry.Eligible
			}
		}
		b.add(p.Name(), estimate)
	}
	if tty && isTerminal(log.Out) {
		b.log, b.logOut = log, log.Out
		log.SetOutput(&aboveBars{p: b.p, after: b.logOut})
	}
	return b
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

type lines struct{ w io.Writer }

func (l lines) batch(e actors.BatchDone) {
	fmt.Fprintf(l.w, "%s: batch %d deleted %s\n", e.Name, e.Batch, counted(e.Rows, "row", "rows"))
}
func (lines) passDone(string) {}
func (lines) wait()           {}
func (lines) stop()           {}

// newBars returns an empty progress container drawing on w: a terminal when tty, a
// pipe otherwise.
func newBars(ctx context.Context, w io.Writer, tty bool) *bars {
	b := &bars{bars: map[string]*mpb.Bar{}, rows: map[string]int64{}, totals: map[string]int64{}}
	var opts []mpb.ContainerOption
	if tty {
		b.term = &sizedTerminal{Writer: cupwriter.New(w, false), out: w}
		opts = []mpb.ContainerOption{mpb.WithConsoleWriter(b.term), mpb.WithRefreshRate(200 * time.Millisecond)}
	} else {
		// mode "always" on a pipe: whole frames of whole lines, once a second
		opts = []mpb.ContainerOption{mpb.WithOutput(w), mpb.WithWidth(pipeWidth), mpb.WithAutoRefresh(), mpb.WithRefreshRate(time.Second)}
	}
	b.p = mpb.NewWithContext(ctx, opts...)
	return b
}

// add draws a bar for the named pass, starting from estimate, its dry-run count. A bar
// made with total 0 never completes by itself: the estimate is where it starts, the pass
// being done is what ends it, at the rows it deleted.
func (b *bars) add(name string, estimate int64) {
	bar := b.p.AddBar(0, mpb.BarWidth(barWidth),
		mpb.PrependDecorators(decor.Name(name, decor.WCSyncSpaceR), decor.CountersNoUnit("%d / %d rows", decor.WCSyncSpace)),
		mpb.AppendDecorators(decor.AverageSpeed(0, "%.0f rows/s", decor.WCSyncSpace), decor.AverageETA(decor.ET_STYLE_GO, decor.WCSyncSpace)))
	bar.SetTotal(estimate, false)
	b.bars[name], b.totals[name] = bar, estimate
}

type bars struct {
	p      *mpb.Progress
	bars   map[string]*mpb.Bar
	rows   map[string]int64 // deleted so far
	totals map[string]int64 // the dry-run count, raised when more rows turn up

	term   *sizedTerminal // the terminal drawn on; nil on a pipe
	log    *logrus.Logger // routed above the bars; nil when not
	logOut io.Writer      // where it wrote before
	once   sync.Once
}

func (b *bars) batch(e actors.BatchDone) {
	bar, ok := b.bars[e.Name]
	if !ok {
		return
	}
	b.rows[e.Name] += int64(e.Rows)
	// Rows written since the dry run push past its count: the total follows.
	if b.rows[e.Name] > b.totals[e.Name] {
		b.totals[e.Name] = b.rows[e.Name]
		bar.SetTotal(b.totals[e.Name], false)
	}
	bar.IncrBy(e.Rows)
}

// passDone completes the pass's bar at the rows it deleted.
func (b *bars) passDone(name string) {
	if bar, ok := b.bars[name]; ok {
		bar.SetTotal(-1, true)
	}
}

func (b *bars) wait() {
	b.p.Wait()
	b.stop()
}

func (b *bars) stop() {
	b.once.Do(func() {
		b.p.Shutdown()
		if b.term != nil {
			b.term.flushLeftover()
		}
		if b.log != nil {
			b.log.SetOutput(b.logOut)
		}
	})
}

// aboveBars writes log lines through the progress container, which prints them above
// its bars at its next refresh; once the container is done, straight to after.
type aboveBars struct {
	p     *mpb.Progress
	after io.Writer
}

func (a *aboveBars) Write(line []byte) (int, error) {
	if n, err := a.p.Write(line); err == nil {
		return n, nil
	}
	return a.after.Write(line)
}

// sizedTerminal is the terminal writer mpb uses by default, with a size when the
// terminal reports none: a pseudo-terminal made without one (script with no terminal of
// its own) says 0x0, and mpb would draw nothing in it.
type sizedTerminal struct {
	*cupwriter.Writer
	out io.Writer
}

func (t *sizedTerminal) GetTermSize() (width, height int, err error) {
	width, height, err = t.Writer.GetTermSize()
	if err != nil || width <= 0 || height <= 0 {
		return fallbackColumns, fallbackRows, nil
	}
	return width, height, nil
}

// cursorUp is what the terminal writer leaves in its buffer after drawing a frame: the
// move back to the frame's top, so the next frame overwrites it.
var cursorUp = regexp.MustCompile(`^\x1b\[[0-9]+A\x1b\[J`)

// flushLeftover writes the log lines that came after the last frame, below it: without
// the move back up, which would let the next output overwrite the bars. Call it only
// once the container is shut down.
func (t *sizedTerminal) flushLeftover() {
	rest := cursorUp.ReplaceAll(t.Bytes(), nil)
	t.Reset()
	if len(rest) > 0 {
		_, _ = t.out.Write(rest)
	}
}
