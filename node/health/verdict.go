package health

import (
	"fmt"
	"strings"

	"github.com/retentionkit/retention/actors"
)

// State is a node's health in one word, as /readyz, the dashboard and `retention
// status` all spell it.
type State string

// The states a Verdict can hold.
const (
	// Starting: the runtime has not started yet; nothing was recorded to judge.
	Starting State = "starting"
	// Ready: no pass has a problem.
	Ready State = "ready"
	// Degraded: at least one pass has a problem (see Reasons).
	Degraded State = "degraded"
)

// Verdict is what a node's health is, judged once from what the runtime recorded. Every
// reader (the readiness probe, the dashboard, the CLI) takes this value instead of
// deciding for itself, so "degraded" cannot mean one thing on a page and another on the
// probe.
type Verdict struct {
	State    State
	Problems []Problem
}

// Judge returns the verdict on a started runtime's status st: Degraded with every
// problem when any pass has one (failing counts from failedSweeps sweeps in a row, as in
// Problems), else Ready. A caller whose runtime has not started reports Starting itself.
func Judge(st actors.Status, failedSweeps int) Verdict {
	if problems := Problems(st, failedSweeps); len(problems) > 0 {
		return Verdict{State: Degraded, Problems: problems}
	}
	return Verdict{State: Ready}
}

// String is the verdict in one line, as `retention status` prints it: the state, then
// each problem as pass (reason, failures in a row: error). The probe's JSON and the
// dashboard's badge hold the same state and problems.
func (v Verdict) String() string {
	if len(v.Problems) == 0 {
		return string(v.State)
	}
	parts := make([]string, 0, len(v.Problems))
	for _, p := range v.Problems {
		s := fmt.Sprintf("%s (%s, %d failed in a row", p.Pass, p.Reason, p.ConsecutiveFailures)
		if p.Error != "" {
			s += ": " + p.Error
		}
		parts = append(parts, s+")")
	}
	return string(v.State) + ": " + strings.Join(parts, "; ")
}
