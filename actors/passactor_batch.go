package actors

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/retentionkit/retention/core"
	"github.com/retentionkit/retention/core/clock"
	"github.com/retentionkit/retention/passes"
)

// errBatchTimedOut is the cause a batch's context is cancelled with at BatchTimeout.
var errBatchTimedOut = errors.New("batch timed out")

// batchResult is one PurgeBatch's outcome, sent back to the actor from the goroutine
// that ran it.
type batchResult struct {
	inc, req uint64
	pass     passes.Pass
	rows     int
	skipped  int
	more     bool           // the pass said more is waiting despite a short batch
	retired  int            // partitions the batch retired or reported on (passes.ReportPartition)
	left     partitionsLeft // expired partitions the batch's reports left attached
	held     int            // rows the pass left in place on their own (passes.ReportHeld)
	heldBy   map[string]int // skipped and held rows, by cause (see heldCause)
	err      error
	timedOut bool
	elapsed  time.Duration
	size     int           // the batch size asked for (an override may change the next one's)
	took     time.Duration // PurgeBatch's wall-clock time, for the pace
}

// runBatch runs one PurgeBatch off the mailbox and sends the result back.
func (a *passActor) runBatch(ctx actor.Context) {
	sw, reg := a.sweep, a.cell.reg
	bctx, cancel := context.WithCancelCause(a.d.batchBase)
	var timeout clock.Timer
	if t := a.opts().BatchTimeout; t > 0 {
		timeout = a.d.clock.AfterFunc(t, func() { cancel(errBatchTimedOut) })
	}
	a.inflight = cancel
	name, sweepID, d := a.name(), sw.id, a.d
	report := &batchReport{publish: func(key any, err error) {
		d.publish(RowSkipped{Name: name, Sweep: sweepID, Key: key, Err: err})
	}, partition: func(r passes.PartitionReport) {
		d.publish(PartitionEvent{Name: name, Sweep: sweepID, Report: r})
	}}
	bctx = passes.WithBatchReporter(bctx, report)
	size := a.batchSize()
	res := &batchResult{inc: a.inc, req: a.req, size: size}
	self, pass, cutoff, start := ctx.Self(), sw.pass, sw.cutoff, d.clock.Now()
	a.startWorker()
	a.worker <- func() {
		wall := time.Now()
		res.pass, res.rows, res.err = purge(bctx, pass, reg.New, size, cutoff)
		res.took = time.Since(wall)
		res.timedOut = res.err != nil && errors.Is(context.Cause(bctx), errBatchTimedOut)
		res.skipped, res.more = int(report.skipped.Load()), report.more.Load()
		res.retired = int(report.partitions.Load())
		res.left = report.takeLeft()
		res.held, res.heldBy = int(report.held.Load()), report.takeCauses()
		res.elapsed = d.clock.Now().Sub(start)
		if timeout != nil {
			timeout.Stop()
		}
		cancel(nil)
		d.system.Root.Send(self, res)
	}
}

// startWorker starts the goroutine that runs this incarnation's batches. Reusing one
// goroutine keeps the stack a batch grew (a database driver's call chain is deep) instead
// of growing a fresh one for every batch; the channel never blocks, since one batch at a
// time is in flight, and at most the close of the sweep before it is queued ahead.
func (a *passActor) startWorker() {
	if a.worker != nil {
		return
	}
	a.worker = make(chan func(), 2) // a batch and the previous sweep's close
	go func(jobs <-chan func()) {
		for job := range jobs {
			job()
		}
	}(a.worker)
}

// batchReport is the passes.BatchReporter (and HeldReporter) of one batch.
type batchReport struct {
	publish   func(key any, err error)
	partition func(passes.PartitionReport)
	// partitions counts the partition reports: a batch that made one did work, even
	// with no row counted.
	partitions atomic.Int64
	skipped    atomic.Int64
	held       atomic.Int64
	more       atomic.Bool
	mu         sync.Mutex
	causes     map[string]int
	left       partitionsLeft
}

func (r *batchReport) RowSkipped(key any, err error) {
	r.skipped.Add(1)
	r.count(err)
	r.publish(key, err)
}

// RowHeld counts a row the pass left in place without a report of its own (a row in
// quarantine): toward a full batch and the sweep's summary, with no event per row.
func (r *batchReport) RowHeld(_ any, err error) {
	r.held.Add(1)
	r.count(err)
}

// RowsLeftOut counts rows the sweep left out of its selects as held (rows in
// quarantine): into the sweep's summary only, as they are in no batch.
func (r *batchReport) RowsLeftOut(n int, err error) { r.countN(n, err) }

func (r *batchReport) count(err error) { r.countN(1, err) }

func (r *batchReport) countN(n int, err error) {
	cause, ok := heldCause(err)
	if !ok {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.causes == nil {
		r.causes = map[string]int{}
	}
	r.causes[cause] += n
}

func (r *batchReport) takeCauses() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.causes
	r.causes = nil
	return c
}

func (r *batchReport) MoreWaiting() { r.more.Store(true) }

// Partition publishes what the batch did with a partition (passes.ReportPartition).
func (r *batchReport) Partition(p passes.PartitionReport) {
	r.partitions.Add(1)
	r.mu.Lock()
	r.left.add(p)
	r.mu.Unlock()
	if r.partition != nil {
		r.partition(p)
	}
}

func (r *batchReport) takeLeft() partitionsLeft {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.left
}

// partitionsLeft is what the partition reports of a batch, then of a sweep, left: how
// many wholly expired partitions are still attached to the table, and why.
type partitionsLeft struct {
	n      int
	reason string
}

// add counts what r leaves; the reason is a contended report's (it ends the retire
// phase, so there is at most one), else the first kept one's.
func (l *partitionsLeft) add(r passes.PartitionReport) {
	if r.Left <= 0 {
		return
	}
	l.n += r.Left
	if l.reason == "" || r.Outcome == passes.PartitionContended {
		l.reason = string(r.Outcome)
		if r.Reason != nil {
			l.reason += ": " + r.Reason.Error()
		}
	}
}

// merge adds a later batch's partitionsLeft to the sweep's.
func (l *partitionsLeft) merge(o partitionsLeft) {
	l.n += o.n
	if l.reason == "" || strings.HasPrefix(o.reason, string(passes.PartitionContended)+":") {
		l.reason = o.reason
	}
}

// purge builds the pass if this is the sweep's first batch, then runs one batch. A panic
// in either becomes a *core.PanicError.
func purge(ctx context.Context, pass passes.Pass, factory passes.Factory, size int, cutoff time.Time) (p passes.Pass, n int, err error) {
	p = pass
	defer func() {
		if v := recover(); v != nil {
			err = &core.PanicError{Value: v}
		}
	}()
	if p == nil {
		if p, err = factory(ctx); err != nil {
			return nil, 0, fmt.Errorf("build pass: %w", err)
		}
	}
	n, err = p.PurgeBatch(ctx, size, cutoff)
	return p, n, err
}
