package main

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/core/pacing"
)

// window is one measured stretch of a run.
type window struct {
	from, to time.Time
	drain    bool
}

// frontierResult is one variant's alternating-window run.
type frontierResult struct {
	v          variant
	ratios     []float64 // p99 drain / p99 idle, per pair
	idleP99    []float64 // ms, per pair
	drainP99   []float64
	rows       int
	drainTime  time.Duration
	busy       time.Duration // inside batches, in the draining windows
	txns       int
	refills    int
	reasons    map[pacing.Reason]int
	lastBatch  int
	lastDelay  time.Duration
	baselineMs float64
	aftermath  []float64 // s, clearAftermath after each draining window
	signals    signalRatios
}

func (r frontierResult) rate() float64 { return float64(r.rows) / r.drainTime.Seconds() }

// runFrontier measures one variant: a warm-up drain window (unmeasured), then pairs of
// an idle window and a draining window, each followed by a gap (after a draining window,
// by clearAftermath and then the gap); the pass's table is topped up after a draining
// window when the next one could run out. "none" runs the same pairs with neither window
// draining (A/A): their ratios are the run's own noise.
func runFrontier(ctx context.Context, c config, db *bun.DB, v variant) (frontierResult, error) {
	res := frontierResult{v: v}
	if v.none {
		return runAA(ctx, c, v)
	}
	if err := createTable(ctx, db, c.rows); err != nil {
		return res, err
	}
	d, err := startDrain(ctx, db, v)
	if err != nil {
		return res, err
	}
	defer d.stop()
	ld, err := startLoad(ctx, c.loadDSN, c.rate, c.accounts, time.Hour)
	if err != nil {
		return res, err
	}
	defer ld.cmd.Process.Kill()
	var sig *signalSampler
	if c.signals {
		sig = startSignals(ctx, db)
		defer sig.stop()
	}
	time.Sleep(c.gap)
	backlog := c.rows * 9 / 10
	// drainFor opens a draining window, then closes it and, unless -aftermath=false,
	// clears its aftermath before the gap that precedes the next window.
	drainFor := func(w time.Duration) (window, error) {
		d.pool.set(true)
		from := time.Now()
		time.Sleep(w)
		d.pool.set(false)
		win := window{from: from, to: time.Now(), drain: true}
		if c.aftermath {
			time.Sleep(200 * time.Millisecond) // the batch in flight ends
			took, err := clearAftermath(ctx, db)
			if err != nil {
				return win, err
			}
			res.aftermath = append(res.aftermath, took.Seconds())
		}
		time.Sleep(c.gap)
		return win, nil
	}
	var windows []window
	warm, err := drainFor(c.window)
	if err != nil {
		return res, err
	}
	perWindow := d.rowsIn(warm.from, warm.to.Add(time.Second))
	// topUp refills the table when what is left might not last the next draining window.
	// It runs right after a draining window's aftermath, so its own aftermath (and the
	// probes of an adaptive sweep waiting through it) falls before the not-draining
	// window, which the sweep's baseline and the ratio's denominator are taken from.
	round, swept := 0, 0
	topUp := func() error {
		if left := backlog - d.total(); left >= perWindow*3/2+1000 {
			return nil
		}
		round++
		n := c.rows * 9 / 10
		if err := refill(ctx, db, round, n); err != nil {
			return err
		}
		backlog += n
		res.refills++
		settle(2 * time.Second)
		return nil
	}
	if err := topUp(); err != nil {
		return res, err
	}
	for range c.pairs {
		if err := d.err(); err != nil {
			return res, err
		}
		from := time.Now()
		time.Sleep(c.window)
		windows = append(windows, window{from: from, to: time.Now()})
		time.Sleep(c.gap)
		if n := d.drainedSweeps(); n > swept {
			// The sweep ran out of rows before the refill and ended: start the next.
			swept = n
			if err := d.rt.Trigger("audit-log"); err != nil {
				return res, err
			}
		}
		w, err := drainFor(c.window)
		if err != nil {
			return res, err
		}
		windows = append(windows, w)
		perWindow = max(perWindow, d.rowsIn(w.from, w.to.Add(time.Second)))
		if err := topUp(); err != nil {
			return res, err
		}
	}
	time.Sleep(2 * time.Second) // pgbench writes its log in blocks: let the last window's reach the disk
	_ = ld.cmd.Process.Signal(interrupt)
	txns, _ := ld.wait()
	if len(txns) == 0 {
		return res, fmt.Errorf("%s: pgbench logged nothing", v.name)
	}
	for i := 0; i+1 < len(windows); i += 2 {
		idle, drain := windows[i], windows[i+1]
		pi, _ := p99(txns, idle.from, idle.to)
		pd, n := p99(txns, drain.from, drain.to)
		res.txns += n
		if pi > 0 && pd > 0 {
			res.ratios = append(res.ratios, float64(pd)/float64(pi))
			res.idleP99 = append(res.idleP99, ms(pi))
			res.drainP99 = append(res.drainP99, ms(pd))
			if sig != nil {
				res.signals.add(sig.in(idle.from, idle.to, txns), sig.in(drain.from, drain.to, txns))
			}
		}
		// A batch in flight when the window closes ends within the next moment: count it.
		rows, busy := d.batchesIn(drain.from, drain.to.Add(200*time.Millisecond))
		res.rows += rows
		res.busy += busy
		res.drainTime += drain.to.Sub(drain.from)
	}
	res.reasons = d.reasons()
	if p := d.pace(); p != nil {
		res.lastBatch, res.lastDelay, res.baselineMs = p.Batch, p.Delay, ms(p.Baseline)
	}
	return res, d.err()
}

// runAA runs pairs of windows under the load with no drain at all, timed as a drain's
// pairs are (the aftermath's vacuum and checkpoint left out: there is nothing to clear),
// and returns their ratios: what the ratio of two windows is when nothing differs
// between them.
func runAA(ctx context.Context, c config, v variant) (frontierResult, error) {
	res := frontierResult{v: v}
	ld, err := startLoad(ctx, c.loadDSN, c.rate, c.accounts, time.Hour)
	if err != nil {
		return res, err
	}
	defer ld.cmd.Process.Kill()
	time.Sleep(c.gap + c.window + c.gap) // as a drain's warm-up window
	var windows []window
	for range 2 * c.pairs {
		from := time.Now()
		time.Sleep(c.window)
		windows = append(windows, window{from: from, to: time.Now()})
		time.Sleep(c.gap)
	}
	time.Sleep(2 * time.Second)
	_ = ld.cmd.Process.Signal(interrupt)
	txns, _ := ld.wait()
	if len(txns) == 0 {
		return res, fmt.Errorf("%s: pgbench logged nothing", v.name)
	}
	for i := 0; i+1 < len(windows); i += 2 {
		pa, _ := p99(txns, windows[i].from, windows[i].to)
		pb, n := p99(txns, windows[i+1].from, windows[i+1].to)
		res.txns += n
		if pa > 0 && pb > 0 {
			res.ratios = append(res.ratios, float64(pb)/float64(pa))
			res.idleP99 = append(res.idleP99, ms(pa))
			res.drainP99 = append(res.drainP99, ms(pb))
		}
		res.drainTime += windows[i+1].to.Sub(windows[i+1].from)
	}
	return res, nil
}
