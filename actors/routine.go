package actors

import "github.com/retentionkit/retention/passes/ledger"

// routineLoop reports whether name is one of the runtime's own bookkeeping loops that
// run on a timer and usually find nothing: the run recovery, the work-queue poller and
// the two ledger cleanups (metadata and dead letters). A sweep of theirs that found nothing is not news, so it writes no info line
// and no run (half of a node's log and most of its Runs page were theirs); one that did
// work, failed or skipped a row is logged and recorded like any sweep.
func routineLoop(name string) bool {
	switch name {
	case ledger.NameRunRecovery, ledger.NameWorkQueuePoller,
		ledger.NameMetadataCleanup, ledger.NameDeadLetterCleanup:
		return true
	}
	return false
}

// idle reports whether e ended a sweep that found nothing to do: it succeeded with no
// row deleted and none skipped.
func idle(e SweepDone) bool {
	return e.Reason.Succeeded() && e.Rows == 0 && e.Skipped == 0
}

// routineQuiet reports whether e is a routine loop's line that only says the loop is
// alive: its start, a sweep starting, an idle sweep ending, its stop with the node. The
// log observer writes those at debug.
func routineQuiet(e Event) bool {
	if !routineLoop(e.PassName()) {
		return false
	}
	switch e := e.(type) {
	case PassStarted, SweepStarted:
		return true
	case SweepDone:
		return idle(e)
	case PassStopped:
		return !e.Degraded
	}
	return false
}
