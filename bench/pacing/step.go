package main

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"
)

// stepResult is one step-test run: per-second drain rows and foreground p99, and the
// phases' p99.
type stepResult struct {
	v                  variant
	rows               []int           // per second of the drain
	p99s               []time.Duration // per second, both loads
	before, step, post time.Duration   // p99 of each phase
	backoff, recovery  float64         // seconds; -1 when it never happened
	rates              [3]float64      // rows/s before, during, after
}

// runStep drains for c.stepDrain under the base load; from c.stepAt into the drain a
// second load at twice the base rate runs for c.stepFor (the foreground triples), then
// stops. "none" runs the same timeline without draining, for the reference p99.
func runStep(ctx context.Context, c config, db *bun.DB, v variant) (stepResult, error) {
	res := stepResult{v: v, backoff: -1, recovery: -1}
	// A longer drain: twice the backlog, built (and vacuumed and checkpointed) before
	// the clock starts, so no bulk load's aftermath falls into the measurement.
	if err := createTable(ctx, db, 2*c.rows); err != nil {
		return res, err
	}
	var d *drainer
	if !v.none {
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
	start := time.Now()
	if d != nil {
		d.pool.set(true)
	}
	time.Sleep(c.stepAt)
	extra, err := startLoad(ctx, c.loadDSN, 2*c.rate, c.accounts, c.stepFor)
	if err != nil {
		return res, err
	}
	time.Sleep(time.Until(start.Add(c.stepDrain)))
	if d != nil {
		d.pool.set(false)
	}
	time.Sleep(2 * time.Second)
	_ = base.cmd.Process.Signal(interrupt)
	txns, _ := base.wait()
	more, err := extra.wait()
	if err != nil {
		return res, fmt.Errorf("step load: %w", err)
	}
	txns = append(txns, more...)
	secs := int(c.stepDrain / time.Second)
	for s := range secs {
		from := start.Add(time.Duration(s) * time.Second)
		p, _ := p99(txns, from, from.Add(time.Second))
		res.p99s = append(res.p99s, p)
		if d != nil {
			res.rows = append(res.rows, d.rowsIn(from, from.Add(time.Second)))
		}
	}
	stepFrom, stepTo := start.Add(c.stepAt), start.Add(c.stepAt+c.stepFor)
	res.before, _ = p99(txns, start, stepFrom)
	res.step, _ = p99(txns, stepFrom, stepTo)
	res.post, _ = p99(txns, stepTo, start.Add(c.stepDrain))
	if d == nil {
		return res, nil
	}
	at, until := int(c.stepAt/time.Second), int((c.stepAt+c.stepFor)/time.Second)
	pre := make([]float64, 0, 5)
	for s := max(0, at-5); s < at; s++ {
		pre = append(pre, float64(res.rows[s]))
	}
	preRate := median(pre)
	sum := func(a, b int) float64 {
		n := 0
		for _, r := range res.rows[a:b] {
			n += r
		}
		return float64(n) / float64(b-a)
	}
	res.rates = [3]float64{sum(0, at), sum(at, until), sum(until, secs)}
	for s := at; s < until; s++ {
		if float64(res.rows[s]) < preRate/2 {
			res.backoff = float64(s - at)
			break
		}
	}
	for s := until; s < secs; s++ {
		if float64(res.rows[s]) >= 0.8*preRate {
			res.recovery = float64(s - until)
			break
		}
	}
	return res, d.err()
}
