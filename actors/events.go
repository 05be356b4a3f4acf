package actors

import (
	"time"

	"github.com/retentionkit/retention/core/pacing"
	"github.com/retentionkit/retention/supervisor"
)

// Event is something that happened to a pass. Events are plain values with no process
// identity in them, so they can be logged, counted, stored, or sent to another node.
type Event interface {
	// PassName names the pass the event is about.
	PassName() string
}

// StopReason says why a sweep ended.
type StopReason string

// The reasons a sweep ends.
const (
	// Drained: a batch came back short, so nothing older than the cutoff is left.
	Drained StopReason = "drained"
	// BatchLimit: MaxBatchesPerSweep full batches ran; work remains for the next sweep.
	BatchLimit StopReason = "batch_limit"
	// Failed: a batch failed; supervision takes over.
	Failed StopReason = "failed"
	// Cancelled: a batch timed out; the next sweep comes on the normal cadence.
	Cancelled StopReason = "cancelled"
	// Stopped: the runtime stopped during the sweep.
	Stopped StopReason = "stopped"
	// Contended: the pass said more was waiting (passes.ReportMoreWaiting), yet its last
	// ContendedAfter batches took nothing: the rows left are out of its reach for now
	// (locked by other transactions, say). Work remains; the next sweep tries again.
	Contended StopReason = "contended"
	// Elsewhere: the sweep's advisory lock is held by another session (another member
	// of the cluster sweeps the pass; passes.ErrRunningElsewhere), so it ended before
	// its first batch. Not a failure: supervision does not restart the pass, and it
	// never makes an exit code non-zero. Not a success either: this node did none of the work, so
	// nothing that marks a pass healthy (last success, cleared drift, supervision's
	// good-sweep reset) follows from it. The next try comes after Config.ElsewhereRetry,
	// doubling while denials continue.
	Elsewhere StopReason = "elsewhere"
	// Held: the sweep came to the end of the expired rows and left some in place that it
	// could not delete on their own: rows a foreign key the pass does not list still
	// references (or a trigger refuses), rows in quarantine (SweepDone.HeldBy counts
	// them by cause). Not contention: nothing was locked, and the next sweep cannot
	// delete them either until what holds them goes, so no work is left for it.
	Held StopReason = "held"
)

// ContendedAfter is how many batches in a row may report more waiting while deleting and
// skipping nothing before the sweep ends as Contended instead of asking again at once.
const ContendedAfter = 5

// Succeeded reports whether a sweep that ended for r did its work: it drained, or it
// stopped at the batch limit or at rows out of its reach, with the rest left for the
// next sweep, or it left only rows something holds. Failed, cancelled and stopped
// sweeps did not.
func (r StopReason) Succeeded() bool {
	return r == Drained || r == BatchLimit || r == Contended || r == Held
}

// LeavesWork reports whether a sweep that ended for r knowingly left expired rows
// behind for the next sweep. A sweep that ran elsewhere left nothing of its own.
func (r StopReason) LeavesWork() bool { return r == BatchLimit || r == Contended }

// PassStarted says a pass actor started; its first sweep comes after Offset.
type PassStarted struct {
	Name   string
	Offset time.Duration
	// Restart is true when supervision restarted the actor.
	Restart bool
}

// SweepStarted says a sweep began with its cutoff fixed: rows older than Cutoff go.
type SweepStarted struct {
	Name    string
	Sweep   int64
	Cutoff  time.Time
	Trigger bool      // started by Trigger rather than the schedule
	At      time.Time // when it started, on the runtime's clock
	// Runs are the ledger runs this sweep serves: requested sweeps (TriggerRun) that it
	// started for, or that were coalesced into it.
	Runs []int64
}

// BatchDone says one PurgeBatch returned.
type BatchDone struct {
	Name     string
	Sweep    int64
	Batch    int
	Rows     int
	Duration time.Duration
}

// SweepDone says a sweep ended, with its totals and why.
type SweepDone struct {
	Name        string
	Sweep       int64
	Cutoff      time.Time
	Rows        int
	Skipped     int
	Batches     int
	WorkRemains bool
	Reason      StopReason
	Duration    time.Duration
	At          time.Time // when it ended, on the runtime's clock
	// Denied is, for Elsewhere, the lock's denial: it names the identity and, where
	// PostgreSQL shows it, the holder (a *passes.ElsewhereError inside).
	Denied error
	// HeldBy counts the rows the sweep left in place because something holds them, by
	// cause (a constraint and its table, "in quarantine"): the one summary of them a
	// sweep logs, instead of a warning per row. Empty when it held none.
	HeldBy map[string]int

	// Pace is the sweep's adaptive pacing; nil for a fixed-pace sweep.
	Pace *PaceSummary
}

// PaceSummary is how an adaptive sweep was paced, for its summary log line.
type PaceSummary struct {
	// MinBatch and MaxBatch are the smallest and largest batch the controller chose;
	// LastBatch and LastDelay its last choice.
	MinBatch, MaxBatch, LastBatch int
	LastDelay                     time.Duration
	// Rate is the rate it aimed at last, in rows per second.
	Rate float64
	// Baseline, Probe and ReplicaLag are the last figures the controller judged by.
	Baseline, Probe, ReplicaLag time.Duration
	// CommitBaseline and Commit are the commit probe's, zero where there is none.
	CommitBaseline, Commit time.Duration
	// BusyBaseline and Busy are the busy sessions' (PaceStatus), zero where none show.
	BusyBaseline, Busy float64
	// Cuts counts the sweep's multiplicative back-offs; BackingOff is the time it spent
	// backing off; Changes counts its PaceChanged events.
	Cuts       int
	BackingOff time.Duration
	Changes    int
}

// PaceChanged says an adaptive pass's controller changed mode: it learned its first
// baseline, backed off because a signal degraded (Reason names which), or recovered.
// Routine adjustments between those are not events; the status and the metrics show
// them.
type PaceChanged struct {
	Name   string
	Sweep  int64
	Reason pacing.Reason
	// Detail says it with the numbers.
	Detail string
	// Batch and Delay are the pace chosen with the change; Rate the rate aimed at.
	Batch int
	Delay time.Duration
	Rate  float64
	// Baseline, Probe and ReplicaLag are the figures judged.
	Baseline, Probe, ReplicaLag time.Duration
	At                          time.Time
}

// SweepCloseFailed says closing a sweep's pass failed (passes.Closer): what it does at
// a sweep's end, such as a table pass's hygiene or giving its connection back. The sweep
// itself is over and counted; the pass sweeps again on its cadence.
type SweepCloseFailed struct {
	Name  string
	Sweep int64
	Err   error
}

// PassName names the pass.
func (e SweepCloseFailed) PassName() string { return e.Name }

// PassFailed says a sweep failed with Err; supervision decides what follows.
type PassFailed struct {
	Name  string
	Sweep int64
	Err   error
}

// PassCancelled says a batch was cancelled while nobody asked the runtime to stop: it
// ran past BatchTimeout.
type PassCancelled struct {
	Name  string
	Sweep int64
	Err   error
}

// PassRestarted says supervision restarted the pass, which waits Backoff before its
// next sweep.
type PassRestarted struct {
	Name    string
	Attempt int
	Backoff time.Duration
	Class   supervisor.Class
	Err     error
}

// PassStopped says the pass actor stopped: because the runtime stopped, or because
// supervision gave up (Degraded, with the last error).
type PassStopped struct {
	Name     string
	Reason   string
	Degraded bool
	Err      error
	// Unserved are ledger runs requested of the pass that no sweep served before it
	// stopped (a trigger that arrived during its last sweep or as it drained, or as
	// Deactivate moved it away); the ledger observer closes them as cancelled, so none
	// stays InProgress, on a member that lives on or after the last node stopped.
	Unserved []int64
}

// RowSkipped says a pass left a row in place for the rest of the sweep because deleting
// it failed; it is tried again next sweep.
type RowSkipped struct {
	Name  string
	Sweep int64
	Key   any
	Err   error
}

func (e PassStarted) PassName() string   { return e.Name }
func (e SweepStarted) PassName() string  { return e.Name }
func (e BatchDone) PassName() string     { return e.Name }
func (e SweepDone) PassName() string     { return e.Name }
func (e PassFailed) PassName() string    { return e.Name }
func (e PassCancelled) PassName() string { return e.Name }
func (e PassRestarted) PassName() string { return e.Name }
func (e PassStopped) PassName() string   { return e.Name }
func (e RowSkipped) PassName() string    { return e.Name }
func (e PaceChanged) PassName() string   { return e.Name }
