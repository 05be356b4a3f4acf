package node

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/retentionkit/retention/actors"
)

// The bounds of `sweep --drain`'s retries of rows a sweep could not reach.
const (
	// DefaultDrainRetry is how long a drain (SweepOptions.Drain, `sweep --drain`) keeps
	// sweeping a pass again, without the sweeps deleting anything, before it gives up on
	// the rows left: `--drain-retry`'s default, so a row locked for a moment is retried
	// and one locked for good fails the drain within half a minute.
	DefaultDrainRetry = 30 * time.Second
	// drainBackoffStart is the wait before the first retry; each further one doubles it,
	// up to drainBackoffMax.
	drainBackoffStart = 250 * time.Millisecond
	drainBackoffMax   = 5 * time.Second
)

// drainState is where one pass's --drain stands between its sweeps.
type drainState struct {
	stalled time.Time     // when the sweeps stopped deleting; zero while they delete
	wait    time.Duration // the next retry's backoff
	retries int
	left    int    // expired rows the last count found
	why     string // why they are left, for the message
}

// counter counts the expired rows a pass still has at a cutoff (a dry-run count).
type counter func(ctx context.Context, pass string, cutoff time.Time) (int, error)

// drainer decides, after each sweep of a drain, whether the pass is drained, needs
// another sweep now (it stopped at the batch limit), another after a backoff (rows it
// could not reach: locked by other transactions, or batches that timed out), or has run
// out of retries with rows left.
type drainer struct {
	bound  time.Duration
	count  counter
	kept   func(ctx context.Context, pass string) (int, error) // rows in quarantine; nil: none
	now    func() time.Time
	states map[string]*drainState
}

func newDrainer(bound time.Duration, count counter) *drainer {
	return &drainer{bound: bound, count: count, now: time.Now, states: map[string]*drainState{}}
}

// known is how many of the rows left the pass has reported already: skipped in this
// sweep, or kept in quarantine (which holds the rows skipped before, and these).
func (d *drainer) known(ctx context.Context, e actors.SweepDone) int {
	if d.kept == nil {
		return e.Skipped
	}
	q, err := d.kept(ctx, e.Name)
	if err != nil {
		return e.Skipped
	}
	return max(e.Skipped, q)
}

// verdict is what follows a sweep of a drain.
type verdict struct {
	again bool          // sweep again, after wait
	wait  time.Duration // the backoff before it
	err   error         // the drain gave up: rows are left, or they could not be counted
	kept  int           // the drain is done, leaving these rows skipped or in quarantine
}

// after decides what follows the sweep e reported.
func (d *drainer) after(ctx context.Context, e actors.SweepDone) verdict {
	st := d.states[e.Name]
	if st == nil {
		st = &drainState{}
		d.states[e.Name] = st
	}
	switch e.Reason {
	case actors.BatchLimit:
		st.stalled, st.wait = time.Time{}, 0
		return verdict{again: true}
	case actors.Drained, actors.Held, actors.Contended, actors.Cancelled, actors.Failed:
	default: // stopped: the summary says so
		return verdict{}
	}
	left, err := d.count(ctx, e.Name, e.Cutoff)
	if err != nil {
		return verdict{err: fmt.Errorf("%s: counting the expired rows left: %w", e.Name, err)}
	}
	st.left, st.why = left, leftBecause(e)
	if left == 0 {
		return verdict{}
	}
	if e.Reason == actors.Failed { // the summary names the failure; this says what it left
		return verdict{err: st.gaveUp(e.Name, "")}
	}
	if known := d.known(ctx, e); left <= known {
		// Each was tried, failed and reported (a skipped-row warning, the quarantine):
		// left in place on purpose, not passed over, and a retry fails alike.
		return verdict{kept: left}
	}
	now := d.now()
	if e.Rows > 0 || st.stalled.IsZero() {
		st.stalled, st.wait = now, drainBackoffStart
	}
	if now.Add(st.wait).Sub(st.stalled) > d.bound {
		return verdict{err: st.gaveUp(e.Name, fmt.Sprintf(", still there after %s over %v", counted(st.retries, "more sweep", "more sweeps"), now.Sub(st.stalled).Round(time.Second)))}
	}
	v := verdict{again: true, wait: st.wait}
	st.retries++
	st.wait = min(2*st.wait, drainBackoffMax)
	return v
}

func (st *drainState) gaveUp(pass, tail string) error {
	return fmt.Errorf("%s: %s left (%s)%s", pass, counted(st.left, "expired row", "expired rows"), st.why, tail)
}

// leftBecause says why a sweep that ended for e's reason left expired rows behind.
func leftBecause(e actors.SweepDone) string {
	var why []string
	switch e.Reason {
	case actors.Contended:
		why = append(why, "locked by other transactions")
	case actors.Held:
		why = append(why, "held by what the sweep's held-rows warning names (a foreign key the pass does not list, say)")
	case actors.Cancelled:
		why = append(why, "its batches time out: see batch_timeout")
	case actors.Failed:
		why = append(why, "the sweep failed")
	default:
		why = append(why, "the sweep passed them over: locked by other transactions, or written during it")
	}
	if e.Skipped > 0 {
		why = append(why, fmt.Sprintf("%d could not be deleted: see the skipped-row warnings", e.Skipped))
	}
	return strings.Join(why, "; ")
}

// counted is n followed by its noun, singular for exactly one ("1 pass", "2 passes"),
// as the CLI counts, so a drain's messages never read "1 rows".
func counted(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}
