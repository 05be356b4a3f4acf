package actors

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/retentionkit/retention/core/pacing"
	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/supervisor"
)

// PassState is where a pass is in its cycle.
type PassState string

// The states a pass reports.
const (
	// StateWaiting: between sweeps (or before the first, in its stagger).
	StateWaiting PassState = "waiting"
	// StateSweeping: a sweep is running.
	StateSweeping PassState = "sweeping"
	// StateBackoff: a sweep failed and the restarted pass waits out its backoff.
	StateBackoff PassState = "backoff"
	// StateDisabled: no retention period, so the pass never sweeps.
	StateDisabled PassState = "disabled"
	// StateStopped: the pass actor stopped (see PassStatus.Degraded).
	StateStopped PassState = "stopped"
	// StatePaused: an operator paused the pass and nothing of it runs; a sweep it held
	// continues on resume.
	StatePaused PassState = "paused"
)

// PassStatus is a snapshot of one pass.
type PassStatus struct {
	Name     string
	Target   string
	Database string
	State    PassState
	// Degraded is true once supervision gave up on the pass: it no longer sweeps.
	Degraded bool
	// Drift is true while the pass's last sweep failed with configuration drift (a
	// table or column it was configured with is missing); DriftError says what is
	// missing. The pass keeps retrying; its next good sweep clears both.
	Drift      bool
	DriftError string

	Sweeps              int64
	LastSweepStarted    time.Time
	LastSweepEnded      time.Time
	LastSweepRows       int
	LastSweepReason     StopReason
	LastWorkRemains     bool
	TotalRows           int64
	TotalSkipped        int64
	Failures            int64
	ConsecutiveFailures int
	Restarts            int
	LastError           string
	// NextSweep is when the next scheduled sweep starts; zero while sweeping or stopped.
	NextSweep time.Time
	// ExpiredPartitionsLeft counts the wholly expired partitions the last sweep that
	// ran to its end left attached to the table (a pass with partitions:): its retire
	// phase could not take a partition's lock (contended), or left one to the row path
	// (kept); ExpiredPartitionsReason says why: the contended report's reason, else
	// the first kept one's. Zero
	// is "nothing expired left", not "nothing expired": a later sweep that retires
	// them clears both.
	ExpiredPartitionsLeft   int
	ExpiredPartitionsReason string

	// The pace in force: the registration's, or an operator's override (Override).
	BatchSize     int
	BatchDelay    time.Duration
	SweepInterval time.Duration
	// PacingOverride is the pace controller an operator set; empty: the registration's.
	PacingOverride string
	// Paused is true while an operator holds the pass (see StatePaused: a batch in
	// flight when the pause came still finishes).
	Paused bool
	// Pace is an adaptive pass's current pace; nil until its first adaptive sweep. It is
	// replaced, never changed in place: every snapshot of the status shares it.
	Pace *PaceStatus
}

// PaceStatus is an adaptive pass's pace as its controller last chose it.
type PaceStatus struct {
	// Pacing is the mode the pass runs in (it may have been switched at run time).
	Pacing passes.Pacing
	// Mode is what the controller is doing: learning, growing or backing off.
	Mode  pacing.Mode
	Batch int
	Delay time.Duration
	// Rate is the rate aimed at, in rows per second.
	Rate                        float64
	Baseline, Probe, ReplicaLag time.Duration
	// CommitBaseline and Commit are the commit probe's baseline and last p75; zero
	// where the database has none.
	CommitBaseline, Commit time.Duration
	// BusyBaseline and Busy are the p75 of the database's other busy sessions while
	// the sweep held back and at the last evaluation; zero where the database shows
	// none (SQLite) or while none was busy.
	BusyBaseline, Busy float64
	Blocked            int
	// WaitingForReplica, when set, says why the sweep holds its batches: a listed
	// replica whose lag cannot be told (not replicating, or not answering).
	WaitingForReplica string
	// BackingOff is the total time spent backing off since the pass actor started.
	BackingOff time.Duration
	Cuts       int
	LastReason pacing.Reason
}

// SlotStatus is the admission pool of one database.
type SlotStatus struct {
	InUse    int
	Capacity int
}

// Status is a snapshot of the runtime.
type Status struct {
	Passes []PassStatus
	Slots  map[string]SlotStatus
	// Degraded is true when any pass was stopped by supervision.
	Degraded bool
	// Drift is true when any pass is in configuration drift (PassStatus.Drift).
	Drift bool
}

// passCell is what the runtime keeps of one pass across the incarnations of its actor:
// identity, options, status, and what supervision decided for the next incarnation.
type passCell struct {
	reg      passes.Registration
	offset   time.Duration
	strategy *supervisor.Strategy

	pid          atomic.Pointer[actor.PID]
	group        *actor.PID // the supervisor the pass actor runs under
	incarnations atomic.Uint64
	requests     atomic.Uint64 // admission request ids, unique across incarnations

	mu      sync.Mutex
	status  PassStatus
	backoff *time.Duration // set by supervision for the next incarnation to wait
	gaveUp  error          // set when supervision stops the pass for good
	gone    chan struct{}  // closed when the pass actor stops for good
	place   cellPlacement
	// override is the operator's; effective is the registration's options with it applied
	// (nil: none set yet).
	override  Override
	effective *passes.Options
	pacing    passes.Pacing // set by Runtime.SetPacing; "" follows the options
}

// pacingMode is the pass's pacing now: an override set at run time, or its options'.
func (c *passCell) pacingMode() passes.Pacing {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pacing != "" { // an operator's choice wins over the options'
		return c.pacing
	}
	if c.reg.Options.Pacing == "" {
		return passes.PacingFixed
	}
	return c.reg.Options.Pacing
}

func newPassCell(reg passes.Registration) *passCell {
	c := &passCell{reg: reg, offset: passes.StaggerOffset(reg.Name, reg.Options.MaxStartupStagger), gone: make(chan struct{})}
	c.status = PassStatus{Name: reg.Name, Target: reg.TargetKey(), Database: reg.DatabaseName(), State: StateWaiting,
		BatchSize: reg.Options.BatchSize, BatchDelay: reg.Options.BatchDelay, SweepInterval: reg.Options.SweepInterval}
	if !reg.Options.Enabled() {
		c.status.State = StateDisabled
	}
	return c
}

func (c *passCell) update(f func(s *PassStatus)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f(&c.status)
}

func (c *passCell) snapshot() PassStatus {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.status
}

// takeBackoff returns and clears the backoff supervision left for this incarnation.
func (c *passCell) takeBackoff() (time.Duration, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.backoff == nil {
		return 0, false
	}
	d := *c.backoff
	c.backoff = nil
	return d, true
}

func (c *passCell) noteRestart(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.backoff = &d
	c.status.Restarts++
	c.status.State = StateBackoff
}

// noteFailure records how supervision classified the pass's failure: drift sets the
// drift flag, any other class clears it (what failed now is something else).
func (c *passCell) noteFailure(class supervisor.Class, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.status.Drift, c.status.DriftError = class == supervisor.Drift, ""
	if c.status.Drift {
		c.status.DriftError = err.Error()
	}
}

func (c *passCell) noteGaveUp(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gaveUp = err
	c.status.Degraded = true
}

func (c *passCell) gaveUpWith() (error, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gaveUp, c.status.Degraded
}

// markGone closes the channel Stop waits on, once per actor.
func (c *passCell) markGone() {
	c.mu.Lock()
	defer c.mu.Unlock()
	select {
	case <-c.gone:
	default:
		close(c.gone)
	}
}

// goneCh returns the channel closed when the current pass actor stops for good.
func (c *passCell) goneCh() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gone
}

// revived resets what supervision giving up left behind, for a new pass actor.
func (c *passCell) revived() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gaveUp, c.backoff, c.gone = nil, nil, make(chan struct{})
	c.status.Degraded, c.status.State, c.status.ConsecutiveFailures = false, StateWaiting, 0
}
