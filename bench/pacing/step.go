package main

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"
)

// stepBin is the width of the bins the drain's rate is read in around a surge: fine
// enough to tell one second from two, wide enough to hold many batches.
const stepBin = 500 * time.Millisecond

// surgeResult is one surge of a step run.
type surgeResult struct {
	pre               float64       // the drain's rows/s before the surge (median of its bins)
	during            float64       // and during it (all of it)
	backoff, recovery float64       // seconds; -1 when it never happened
	p99               time.Duration // the foreground's p99 during the surge
	p99Before         time.Duration // and in the window before it
}

// stepResult is one variant's step run: several surges, each preceded by a window at
// the base load and followed by the time the drain has to recover.
type stepResult struct {
	v       variant
	surges  []surgeResult
	refills int
	// timeline is the first cycle's per-bin drain rows/s and foreground p99, for the report.
	timeline []string
}

// runStep drains under the base load through c.surges cycles: c.stepPre at the base load,
// then a second load at twice the base rate for c.stepFor (the foreground triples), then
// c.stepAfter at the base load again; between cycles the drain is held back (as a slot
// wait would) while the table is topped up when the next cycle could run it dry. "none"
// runs the same timeline without draining, for the reference p99s.
func runStep(ctx context.Context, c config, db *bun.DB, v variant) (stepResult, error) {
	res := stepResult{v: v}
	var d *drainer
	rows := c.stepRows
	if rows <= 0 {
		rows = 4 * c.rows
	}
	if !v.none {
		if err := createTable(ctx, db, rows); err != nil {
			return res, err
		}
		var err error
		if d, err = startDrain(ctx, db, v); err != nil {
			return res, err
		}
		defer d.stop()
	}
	base, err := startLoad(ctx, c.loadDSN, c.rate, c.accounts, time.Hour)
	if err != nil {
		return res, err
	}
	defer base.cmd.Process.Kill()
	time.Sleep(3 * time.Second)
	type cycle struct{ open, from, to, end time.Time }
	var cycles []cycle
	var txns []txn
	backlog, round, swept := rows*9/10, 0, 0
	for range c.surges {
		if d != nil {
			if n := d.drainedSweeps(); n > swept {
				swept = n
				if err := d.rt.Trigger("audit-log"); err != nil {
					return res, err
				}
			}
			d.pool.set(true)
		}
		cy := cycle{open: time.Now()}
		time.Sleep(c.stepPre)
		extra, err := startLoad(ctx, c.loadDSN, 2*c.rate, c.accounts, c.stepFor+time.Second)
		if err != nil {
			return res, err
		}
		cy.from = time.Now()
		time.Sleep(c.stepFor)
		_ = extra.cmd.Process.Signal(interrupt)
		cy.to = time.Now()
		time.Sleep(c.stepAfter)
		cy.end = time.Now()
		if d != nil {
			d.pool.set(false)
		}
		more, err := extra.wait()
		if err != nil {
			return res, fmt.Errorf("surge load: %w", err)
		}
		txns = append(txns, more...)
		cycles = append(cycles, cy)
		if d != nil {
			// Top up when what is left might not last the next cycle: the drain is held
			// back meanwhile, and the refill is in no measured window.
			time.Sleep(200 * time.Millisecond)
			last := d.rowsIn(cy.open, time.Now())
			if left := backlog - d.total(); left < last*3/2+1000 {
				round++
				n := max(c.rows*9/10, last*3/2)
				if err := refill(ctx, db, round, n); err != nil {
					return res, err
				}
				backlog += n
				res.refills++
			}
		}
		time.Sleep(2 * time.Second)
	}
	_ = base.cmd.Process.Signal(interrupt)
	all, _ := base.wait()
	txns = append(txns, all...)
	for i, cy := range cycles {
		s := surgeResult{backoff: -1, recovery: -1}
		s.p99, _ = p99(txns, cy.from, cy.to)
		s.p99Before, _ = p99(txns, cy.open, cy.from)
		if d != nil {
			rate := func(from time.Time) float64 { return float64(d.rowsIn(from, from.Add(stepBin))) / stepBin.Seconds() }
			// The pre-surge rate: the bins of the window's second half, once the drain
			// has picked up again after the hold between cycles.
			var pre []float64
			for t := cy.open.Add(c.stepPre / 2); !t.Add(stepBin).After(cy.from); t = t.Add(stepBin) {
				pre = append(pre, rate(t))
			}
			s.pre = median(pre)
			s.during = float64(d.rowsIn(cy.from, cy.to)) / cy.to.Sub(cy.from).Seconds()
			for t := cy.from; !t.Add(stepBin).After(cy.to); t = t.Add(stepBin) {
				if rate(t) < s.pre/2 {
					s.backoff = t.Add(stepBin).Sub(cy.from).Seconds()
					break
				}
			}
			for t := cy.to; !t.Add(stepBin).After(cy.end); t = t.Add(stepBin) {
				if rate(t) >= 0.8*s.pre {
					s.recovery = t.Add(stepBin).Sub(cy.to).Seconds()
					break
				}
			}
			if i == 0 {
				for t := cy.open; !t.Add(stepBin).After(cy.end); t = t.Add(stepBin) {
					p, _ := p99(txns, t, t.Add(stepBin))
					res.timeline = append(res.timeline, fmt.Sprintf("%.0f;%.1f", rate(t), ms(p)))
				}
			}
		}
		res.surges = append(res.surges, s)
	}
	if d != nil {
		return res, d.err()
	}
	return res, nil
}
