// Package health decides, from a runtime's status, which passes make a node degraded and
// why. /readyz answers from it and the retention_pass_degraded gauge shows the same
// verdicts, so the probe and the dashboard never disagree.
package health

import "github.com/retentionkit/retention/actors"

// Reason is why a pass makes the node degraded.
type Reason string

// The reasons, as /readyz and retention_pass_degraded{reason} spell them.
const (
	// FailingSweeps: the pass's last N sweeps failed (N is the readiness threshold).
	FailingSweeps Reason = "failing_sweeps"
	// StoppedBySupervision: supervision gave up on the pass; it sweeps no more until
	// revived.
	StoppedBySupervision Reason = "stopped_by_supervision"
	// ConfigurationDrift: the pass's last sweep failed because a table or column it was
	// configured with is missing.
	ConfigurationDrift Reason = "configuration_drift"
)

// Reasons lists every reason, in the order a pass's problems are reported.
func Reasons() []Reason { return []Reason{StoppedBySupervision, ConfigurationDrift, FailingSweeps} }

// Problem is one reason one pass makes the node degraded.
type Problem struct {
	Pass   string `json:"pass"`
	Reason Reason `json:"reason"`
	// Error is the pass's last error (what drift found missing, for drift).
	Error string `json:"error,omitempty"`
	// ConsecutiveFailures is how many sweeps in a row failed.
	ConsecutiveFailures int `json:"consecutive_failures"`
}

// Problems returns every problem of every pass in st; a pass failing its sweeps counts
// once it failed failedSweeps in a row (values below 1 count as 1).
func Problems(st actors.Status, failedSweeps int) []Problem {
	var out []Problem
	for _, p := range st.Passes {
		out = append(out, PassProblems(p, failedSweeps)...)
	}
	return out
}

// PassProblems returns the problems of one pass, in the order of Reasons.
func PassProblems(p actors.PassStatus, failedSweeps int) []Problem {
	failedSweeps = max(failedSweeps, 1)
	var out []Problem
	add := func(r Reason, err string) {
		out = append(out, Problem{Pass: p.Name, Reason: r, Error: err, ConsecutiveFailures: p.ConsecutiveFailures})
	}
	if p.Degraded {
		add(StoppedBySupervision, p.LastError)
	}
	if p.Drift {
		add(ConfigurationDrift, p.DriftError)
	}
	if p.ConsecutiveFailures >= failedSweeps {
		add(FailingSweeps, p.LastError)
	}
	return out
}
