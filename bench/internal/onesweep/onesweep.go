// Package onesweep runs one sweep of a table pass on an actors.Runtime the way the
// benchmarks time it, so bench/drain and bench/ptarchiver measure the runtime alike.
package onesweep

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/core/clock"
	"github.com/retentionkit/retention/core/pacing"
	"github.com/retentionkit/retention/passes"
)

// FixedClock reads one instant, so the runtime's cutoff is exactly the benchmark's;
// its timers are the wall clock's.
type FixedClock struct{ At time.Time }

// Now is the fixed instant.
func (c *FixedClock) Now() time.Time { return c.At }

// AfterFunc runs f after d of wall time.
func (c *FixedClock) AfterFunc(d time.Duration, f func()) clock.Timer { return time.AfterFunc(d, f) }

// Result is one sweep as timed.
type Result struct {
	// Rows is what SweepDone reported; -1 when the bound stopped the sweep first (count
	// the table's rows instead).
	Rows int64
	// Elapsed runs from SweepStarted to SweepDone, or to the bound: the actor system's
	// start and the pass's startup checks happen once per process, not per batch.
	Elapsed time.Duration
	// Trace is how the sweep's batches went, so a report can say why a pace was slow.
	Trace Trace
}

// Trace is what a sweep's BatchDone and PaceChanged events said.
type Trace struct {
	// Batches counts the batches that returned; MedianRows and MedianTook are their
	// median size and duration (on the runtime's clock, so zero under a FixedClock).
	Batches    int
	MedianRows int
	MedianTook time.Duration
	// Changes counts the adaptive controller's pace changes by reason (empty for a
	// fixed pace).
	Changes map[pacing.Reason]int
}

// String says the trace in one line, the reasons in a fixed order.
func (t Trace) String() string {
	s := fmt.Sprintf("%d batches, median %d rows", t.Batches, t.MedianRows)
	if t.MedianTook > 0 {
		s += fmt.Sprintf(" in %.1f ms", float64(t.MedianTook)/float64(time.Millisecond))
	}
	if len(t.Changes) == 0 {
		return s
	}
	reasons := slices.Sorted(maps.Keys(t.Changes))
	parts := make([]string, 0, len(reasons))
	for _, r := range reasons {
		parts = append(parts, fmt.Sprintf("%s %d", r, t.Changes[r]))
	}
	return s + "; pace changes: " + strings.Join(parts, ", ")
}

// tracer gathers a Trace from the runtime's events, which arrive on its goroutines.
type tracer struct {
	mu      sync.Mutex
	rows    []int
	took    []time.Duration
	changes map[pacing.Reason]int
}

func (t *tracer) observe(e actors.Event) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch e := e.(type) {
	case actors.BatchDone:
		t.rows, t.took = append(t.rows, e.Rows), append(t.took, e.Duration)
	case actors.PaceChanged:
		if t.changes == nil {
			t.changes = map[pacing.Reason]int{}
		}
		t.changes[e.Reason]++
	}
}

func (t *tracer) trace() Trace {
	t.mu.Lock()
	defer t.mu.Unlock()
	tr := Trace{Batches: len(t.rows), Changes: maps.Clone(t.changes)}
	if len(t.rows) > 0 {
		rows, took := slices.Clone(t.rows), slices.Clone(t.took)
		slices.Sort(rows)
		slices.Sort(took)
		tr.MedianRows, tr.MedianTook = rows[len(rows)/2], took[len(took)/2]
	}
	return tr
}

// Run registers tbl on a runtime whose clock puts the cutoff at cutoff, with batch
// rows per batch, no pause (the default), no batch timeout and no bound on the batches
// of a sweep, and runs its first sweep to the end, or for at most bound (zero: no
// bound; the runtime then cancels the batch under way, whose transaction rolls back).
func Run(ctx context.Context, tbl *passes.Table, batch int, cutoff time.Time, bound time.Duration) (Result, error) {
	return RunPaced(ctx, tbl, batch, 0, cutoff, bound)
}

// RunPaced is Run with a pause of delay between batches (the pass's batch_delay): a
// fixed pace, for a benchmark that compares a paced sweep with a tool paced its own
// way.
func RunPaced(ctx context.Context, tbl *passes.Table, batch int, delay time.Duration, cutoff time.Time, bound time.Duration) (Result, error) {
	retention := time.Hour
	opts := options(retention, batch)
	opts.BatchDelay = delay
	return run(ctx, tbl, opts, &FixedClock{At: cutoff.Add(retention)}, bound)
}

// RunAdaptive is Run with `pacing: adaptive` (batches of at most batch rows). The
// controller times its probes and batches on the runtime's clock, which FixedClock
// stops, so the clock here is the wall clock shifted to read cutoff - slack + the
// retention period when the call starts: the sweep's cutoff then falls in (cutoff -
// slack, cutoff] as long as it starts within slack, and the caller must have no row
// in that range, so the rows deleted are exactly those before cutoff.
func RunAdaptive(ctx context.Context, tbl *passes.Table, batch int, cutoff time.Time, slack, bound time.Duration) (Result, error) {
	retention := time.Hour
	opts := options(retention, batch)
	opts.Pacing = passes.PacingAdaptive
	return run(ctx, tbl, opts, &ShiftedClock{By: time.Until(cutoff.Add(retention - slack))}, bound)
}

// ShiftedClock is the wall clock moved by By: time passes, from a chosen instant.
type ShiftedClock struct{ By time.Duration }

// Now is the wall clock's time plus By.
func (c *ShiftedClock) Now() time.Time { return time.Now().Add(c.By) }

// AfterFunc runs f after d of wall time.
func (c *ShiftedClock) AfterFunc(d time.Duration, f func()) clock.Timer { return time.AfterFunc(d, f) }

// options are the pass options every run shares: the retention period, batch rows
// per batch, no startup stagger, no batch timeout and no bound on a sweep's batches.
func options(retention time.Duration, batch int) passes.Options {
	opts := passes.DefaultOptions()
	opts.RetentionPeriod, opts.BatchSize, opts.MaxStartupStagger = passes.Retain(retention), batch, 0
	opts.MaxBatchesPerSweep, opts.BatchTimeout = 1<<30, 0
	return opts
}

// run registers tbl with opts on a runtime reading clk and times its first sweep.
func run(ctx context.Context, tbl *passes.Table, opts passes.Options, clk clock.Clock, bound time.Duration) (Result, error) {
	quiet := logrus.New()
	quiet.SetOutput(io.Discard)
	started := make(chan time.Time, 1)
	done := make(chan actors.SweepDone, 1)
	failed := make(chan error, 1)
	tr := &tracer{}
	rt := actors.New(actors.Config{Clock: clk, Logger: quiet, Observers: []actors.Observer{actors.ObserverFunc(func(e actors.Event) error {
		tr.observe(e)
		switch e := e.(type) {
		case actors.SweepStarted:
			started <- time.Now()
		case actors.SweepDone:
			done <- e
		case actors.PassFailed:
			failed <- e.Err
		}
		return nil
	})}})
	if err := rt.Register(tbl.Registration(opts)); err != nil {
		return Result{}, err
	}
	if err := rt.Start(ctx); err != nil {
		return Result{}, err
	}
	defer rt.Stop(ctx)
	var stop <-chan time.Time
	if bound > 0 {
		stop = time.After(bound)
	}
	select {
	case d := <-done:
		return Result{Rows: int64(d.Rows), Elapsed: time.Since(<-started), Trace: tr.trace()}, nil
	case err := <-failed:
		return Result{}, err
	case <-stop:
		end := time.Now()
		select {
		case at := <-started:
			return Result{Rows: -1, Elapsed: end.Sub(at), Trace: tr.trace()}, nil
		default:
			return Result{}, errors.New("the sweep had not started when its bound ran out")
		}
	case <-ctx.Done():
		return Result{}, ctx.Err()
	}
}
