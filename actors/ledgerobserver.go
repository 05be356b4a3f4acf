package actors

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/retentionkit/retention/core/clock"
	"github.com/retentionkit/retention/passes/ledger"
)

// LedgerObserver records every sweep in the run ledger: a metadata row that moves from
// InProgress to Completed (drained or batch-limited), Failed or Cancelled (timed out or
// stopped), with its counts, stop reason and error, and log rows for its failures,
// cancellations and every skipped row, so a row that cannot be deleted stays visible
// across sweeps. A sweep started for requested sweeps (Runtime.TriggerRun) finishes
// their Pending runs instead of starting one, and marks their work-queue rows Done. A
// pass that supervision stops gets a dead letter linked to its last failed run.
//
// The runtime's routine loops (the run recovery) get a run only for a sweep that did
// work or went wrong: their sweep's row is written at its first deleted or skipped row,
// its failure, or its end, and an idle sweep writes none, so the Runs page shows the
// passes' sweeps rather than a row every few seconds that says nothing happened.
//
// While a sweep runs, its counts are written to its row as batches complete, at most
// once per ProgressInterval (and once more when it ends), so a node killed mid-sweep
// leaves counts that undercount by at most one interval's batches.
//
// It runs on the observer hub like any observer: a ledger write that fails is returned,
// contained and reported, and never slows or breaks a sweep.
type LedgerObserver struct {
	Ledger *ledger.Ledger
	// Clock stamps log rows and paces progress writes; nil is the wall clock. Give it the
	// runtime's clock.
	Clock clock.Clock
	// Timeout bounds each ledger write; zero means 10 seconds.
	Timeout time.Duration
	// ProgressInterval is the least time between two progress writes of one run; zero
	// means DefaultProgressInterval.
	ProgressInterval time.Duration

	mu         sync.Mutex
	runs       map[sweepKey]*openRun
	lastFailed map[string]int64 // pass -> its latest failed run, for a dead letter
}

// DefaultProgressInterval is the least time between two progress writes of one run.
const DefaultProgressInterval = time.Second

// openRun is a sweep whose start was recorded and whose end was not yet.
type openRun struct {
	ids      []int64 // the first is the sweep's own row; more when requested sweeps coalesced; none yet for a routine loop's sweep that found nothing so far
	name     string
	start    time.Time
	cutoff   time.Time
	err      string // the failure, for the metadata row's error column
	progress ledger.Progress
	written  time.Time // when progress was last written (first: the sweep's start)
}

type sweepKey struct {
	pass  string
	sweep int64
}

// Observe writes e to the ledger.
func (o *LedgerObserver) Observe(e Event) error {
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout())
	defer cancel()
	switch e := e.(type) {
	case SweepStarted:
		ids := e.Runs
		for _, id := range ids {
			if err := o.Ledger.ActivateRun(ctx, id, e.At, e.Cutoff); err != nil {
				return err
			}
		}
		if len(ids) == 0 && routineLoop(e.Name) {
			o.open(sweepKey{e.Name, e.Sweep}, nil, e) // written once it has something to say
			return nil
		}
		if len(ids) == 0 {
			id, err := o.Ledger.StartRun(ctx, e.Name, e.At, e.Cutoff, nil)
			if err != nil {
				return err
			}
			ids = []int64{id}
		}
		o.open(sweepKey{e.Name, e.Sweep}, ids, e)
	case BatchDone:
		if e.Rows > 0 {
			if err := o.write(ctx, sweepKey{e.Name, e.Sweep}); err != nil {
				return err
			}
		}
		return o.batchDone(ctx, e)
	case RowSkipped:
		if err := o.write(ctx, sweepKey{e.Name, e.Sweep}); err != nil {
			return err
		}
		o.skipped(sweepKey{e.Name, e.Sweep})
		return o.log(ctx, sweepKey{e.Name, e.Sweep}, "warning", fmt.Sprintf("row skipped: %v", e.Err), fmt.Sprint(e.Key))
	case PartitionEvent:
		if err := o.write(ctx, sweepKey{e.Name, e.Sweep}); err != nil {
			return err
		}
		level := "info"
		if e.Report.Warns() {
			level = "warning"
		}
		return o.log(ctx, sweepKey{e.Name, e.Sweep}, level, e.Report.String(), "")
	case PassFailed:
		if err := o.write(ctx, sweepKey{e.Name, e.Sweep}); err != nil {
			return err
		}
		o.noteError(sweepKey{e.Name, e.Sweep}, e.Err)
		return o.log(ctx, sweepKey{e.Name, e.Sweep}, "error", fmt.Sprintf("sweep failed: %v", e.Err), "")
	case PassCancelled:
		if err := o.write(ctx, sweepKey{e.Name, e.Sweep}); err != nil {
			return err
		}
		return o.log(ctx, sweepKey{e.Name, e.Sweep}, "warning", fmt.Sprintf("batch cancelled: %v", e.Err), "")
	case SweepDone:
		run, ok := o.close(sweepKey{e.Name, e.Sweep})
		if !ok || (len(run.ids) == 0 && idle(e)) {
			return nil // not recorded at its start, or a routine loop that found nothing
		}
		if len(run.ids) == 0 {
			id, err := o.Ledger.StartRun(ctx, run.name, run.start, run.cutoff, nil)
			if err != nil {
				return err
			}
			run.ids = []int64{id}
		}
		f := finishOf(e)
		f.Error = run.err
		if err := o.Ledger.FinishRun(ctx, run.ids[0], f); err != nil {
			return err
		}
		if err := o.finishCoalesced(ctx, run.ids, f, e.At); err != nil {
			return err
		}
		if f.State == ledger.Failed {
			o.noteFailed(e.Name, run.ids[0])
		}
		return o.Ledger.FinishWork(ctx, run.ids)
	case PassStopped:
		if err := o.closeUnserved(ctx, e); err != nil {
			return err
		}
		if !e.Degraded {
			return nil
		}
		_, err := o.Ledger.AddDeadLetter(ctx, e.Name, fmt.Sprint(e.Err), o.failedRun(e.Name), clock.OrReal(o.Clock).Now())
		return err
	}
	return nil
}

// closeUnserved closes the requested runs a stopped pass never swept: cancelled, saying
// why, and their work-queue rows done.
func (o *LedgerObserver) closeUnserved(ctx context.Context, e PassStopped) error {
	if len(e.Unserved) == 0 {
		return nil
	}
	why := "the pass was deactivated here (placed on another member) before a sweep served this request; request it again"
	if e.Reason != reasonDeactivated {
		why = fmt.Sprintf("the pass stopped (%s) before a sweep served this request; request it again", e.Reason)
	}
	f := ledger.Finish{End: clock.OrReal(o.Clock).Now(), State: ledger.Cancelled, StopReason: string(Stopped), Error: why}
	for _, id := range e.Unserved {
		if err := o.Ledger.FinishRun(ctx, id, f); err != nil {
			return err
		}
	}
	return o.Ledger.FinishWork(ctx, e.Unserved)
}

func (o *LedgerObserver) noteFailed(pass string, id int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.lastFailed == nil {
		o.lastFailed = map[string]int64{}
	}
	o.lastFailed[pass] = id
}

func (o *LedgerObserver) failedRun(pass string) int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.lastFailed[pass]
}

func finishOf(e SweepDone) ledger.Finish {
	f := ledger.Finish{End: e.At, RowsDeleted: int64(e.Rows), RowsSkipped: int64(e.Skipped), Batches: int64(e.Batches), StopReason: string(e.Reason)}
	switch {
	case e.Reason.Succeeded(): // drained, at its batch bound, or ended by contention
		f.State = ledger.Completed
	case e.Reason == Failed:
		f.State = ledger.Failed
	default:
		f.State = ledger.Cancelled
	}
	return f
}

func (o *LedgerObserver) log(ctx context.Context, k sweepKey, level, msg, rowKey string) error {
	o.mu.Lock()
	run, ok := o.runs[k]
	var id int64
	if ok && len(run.ids) > 0 {
		id = run.ids[0]
	}
	o.mu.Unlock()
	if id == 0 {
		return nil // the sweep's start was not recorded; that failure was reported then
	}
	return o.Ledger.Log(ctx, id, level, clock.OrReal(o.Clock).Now(), msg, rowKey)
}

func (o *LedgerObserver) open(k sweepKey, ids []int64, e SweepStarted) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.runs == nil {
		o.runs = map[sweepKey]*openRun{}
	}
	o.runs[k] = &openRun{ids: ids, name: e.Name, start: e.At, cutoff: e.Cutoff, written: e.At}
}

// write starts the row of an open sweep whose start was held back (a routine loop's),
// now that it has something to record; a sweep with a row already is left alone.
func (o *LedgerObserver) write(ctx context.Context, k sweepKey) error {
	o.mu.Lock()
	run, ok := o.runs[k]
	pending := ok && len(run.ids) == 0
	o.mu.Unlock()
	if !pending {
		return nil
	}
	id, err := o.Ledger.StartRun(ctx, run.name, run.start, run.cutoff, nil)
	if err != nil {
		return err
	}
	o.mu.Lock()
	run.ids = []int64{id}
	o.mu.Unlock()
	return nil
}

// batchDone adds a batch to its run's counts and writes them when the last write is at
// least ProgressInterval old.
func (o *LedgerObserver) batchDone(ctx context.Context, e BatchDone) error {
	now := clock.OrReal(o.Clock).Now()
	o.mu.Lock()
	run, ok := o.runs[sweepKey{e.Name, e.Sweep}]
	if !ok {
		o.mu.Unlock()
		return nil // the sweep's start was not recorded; that failure was reported then
	}
	run.progress.RowsDeleted += int64(e.Rows)
	run.progress.Batches = int64(e.Batch)
	due := now.Sub(run.written) >= o.progressInterval()
	if due {
		run.written = now
	}
	p, ids := run.progress, run.ids
	o.mu.Unlock()
	if !due {
		return nil
	}
	if len(ids) == 0 {
		return nil
	}
	// The counts go to the sweep's own row only (see finishCoalesced).
	return o.Ledger.RecordProgress(ctx, ids[0], p)
}

// finishCoalesced ends the requested runs a sweep served beside its own (ids[0]): in the
// same state and for the same reason, but with no counts, and a log row naming the run
// that holds them. Every row a sweep deleted is counted on one run, so the ledger's
// rows_deleted summed over runs is the rows the table lost (the multi-process suite
// once counted a 40,000-row sweep twice, on two coalesced requests).
func (o *LedgerObserver) finishCoalesced(ctx context.Context, ids []int64, f ledger.Finish, at time.Time) error {
	if len(ids) < 2 {
		return nil
	}
	served := ledger.Finish{End: f.End, State: f.State, StopReason: f.StopReason, Error: f.Error}
	msg := fmt.Sprintf("served by run %d, which counts the sweep's rows", ids[0])
	for _, id := range ids[1:] {
		if err := o.Ledger.FinishRun(ctx, id, served); err != nil {
			return err
		}
		if err := o.Ledger.Log(ctx, id, "info", at, msg, ""); err != nil {
			return err
		}
	}
	return nil
}

func (o *LedgerObserver) skipped(k sweepKey) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if run, ok := o.runs[k]; ok {
		run.progress.RowsSkipped++
	}
}

func (o *LedgerObserver) progressInterval() time.Duration {
	if o.ProgressInterval > 0 {
		return o.ProgressInterval
	}
	return DefaultProgressInterval
}

func (o *LedgerObserver) noteError(k sweepKey, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if run, ok := o.runs[k]; ok {
		run.err = err.Error()
	}
}

func (o *LedgerObserver) close(k sweepKey) (*openRun, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	run, ok := o.runs[k]
	delete(o.runs, k)
	return run, ok
}

func (o *LedgerObserver) timeout() time.Duration {
	if o.Timeout > 0 {
		return o.Timeout
	}
	return 10 * time.Second
}
