package admin

import (
	"net/http"
	"time"

	"github.com/retentionkit/retention/actors"
)

// passesBody is /passes's JSON: the documented, stable shape (docs/node.md), not the Go
// field names of actors.Status, so renaming a field in Go never breaks a script.
type passesBody struct {
	Passes []passBody           `json:"passes"`
	Slots  map[string]slotsBody `json:"slots"`
	// Degraded: a pass was stopped by supervision. Drift: a pass is in configuration drift.
	Degraded bool `json:"degraded"`
	Drift    bool `json:"drift"`
}

type passBody struct {
	Name                string     `json:"name"`
	Target              string     `json:"target"`
	Database            string     `json:"database"`
	State               string     `json:"state"`
	Degraded            bool       `json:"degraded"`
	Drift               bool       `json:"drift"`
	DriftError          string     `json:"drift_error,omitempty"`
	Sweeps              int64      `json:"sweeps"`
	LastSweepStarted    *time.Time `json:"last_sweep_started,omitempty"`
	LastSweepEnded      *time.Time `json:"last_sweep_ended,omitempty"`
	LastSweepRows       int        `json:"last_sweep_rows"`
	LastSweepReason     string     `json:"last_sweep_reason,omitempty"`
	LastWorkRemains     bool       `json:"last_work_remains"`
	TotalRows           int64      `json:"total_rows"`
	TotalSkipped        int64      `json:"total_skipped"`
	Failures            int64      `json:"failures"`
	ConsecutiveFailures int        `json:"consecutive_failures"`
	Restarts            int        `json:"restarts"`
	LastError           string     `json:"last_error,omitempty"`
	NextSweep           *time.Time `json:"next_sweep,omitempty"`
	// ExpiredPartitionsLeft: wholly expired partitions the last sweep of a pass with
	// partitions: left attached (contended, or kept for the row path), and why; 0 and
	// no reason once a sweep leaves none, which is not the same as "none expired".
	ExpiredPartitionsLeft   int    `json:"expired_partitions_left"`
	ExpiredPartitionsReason string `json:"expired_partitions_reason,omitempty"`
	// The pace in force (the file's, or an operator's live setting) and the pause.
	BatchSize      int    `json:"batch_size"`
	BatchDelay     string `json:"batch_delay"`
	SweepInterval  string `json:"sweep_interval"`
	PacingOverride string `json:"pacing_override,omitempty"`
	Paused         bool   `json:"paused"`
	// Pace is an adaptive pass's current pace; absent for a fixed pace.
	Pace *paceBody `json:"pace,omitempty"`
}

// paceBody is an adaptive pass's pace in /passes; durations in seconds.
type paceBody struct {
	Pacing            string  `json:"pacing"`
	Mode              string  `json:"mode"`
	BatchSize         int     `json:"batch_size"`
	DelaySeconds      float64 `json:"delay_seconds"`
	RateRowsPerSecond float64 `json:"rate_rows_per_second"`
	ProbeSeconds      float64 `json:"probe_seconds"`
	BaselineSeconds   float64 `json:"baseline_seconds"`
	// The commit probe's last p75 and baseline; 0 where the database has none.
	CommitSeconds         float64 `json:"commit_probe_seconds"`
	CommitBaselineSeconds float64 `json:"commit_baseline_seconds"`
	// The database's other busy sessions (a p75 of counts) and their baseline; 0 where
	// the database shows none.
	BusySessions         float64 `json:"busy_sessions"`
	BusySessionsBaseline float64 `json:"busy_sessions_baseline"`
	ReplicaLagSeconds    float64 `json:"replica_lag_seconds"`
	Blocked              int     `json:"blocked"`
	BackingOffSeconds    float64 `json:"backing_off_seconds"`
	Backoffs             int     `json:"backoffs"`
	LastReason           string  `json:"last_reason,omitempty"`
	// WaitingForReplica says why the sweep's batches wait: a listed replica whose lag
	// cannot be told. Absent while none does.
	WaitingForReplica string `json:"waiting_for_replica,omitempty"`
}

func paceOf(s *actors.PaceStatus) *paceBody {
	if s == nil {
		return nil
	}
	return &paceBody{Pacing: string(s.Pacing), Mode: string(s.Mode), BatchSize: s.Batch, DelaySeconds: s.Delay.Seconds(),
		RateRowsPerSecond: s.Rate, ProbeSeconds: s.Probe.Seconds(), BaselineSeconds: s.Baseline.Seconds(),
		CommitSeconds: s.Commit.Seconds(), CommitBaselineSeconds: s.CommitBaseline.Seconds(),
		BusySessions: s.Busy, BusySessionsBaseline: s.BusyBaseline,
		ReplicaLagSeconds: s.ReplicaLag.Seconds(), Blocked: s.Blocked, BackingOffSeconds: s.BackingOff.Seconds(),
		Backoffs: s.Cuts, LastReason: string(s.LastReason), WaitingForReplica: s.WaitingForReplica}
}

type slotsBody struct {
	InUse    int `json:"in_use"`
	Capacity int `json:"capacity"`
}

// when is t for JSON: absent when zero, RFC 3339 with its zone otherwise.
func when(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func passesOf(st actors.Status) passesBody {
	out := passesBody{Passes: []passBody{}, Slots: map[string]slotsBody{}, Degraded: st.Degraded, Drift: st.Drift}
	for _, p := range st.Passes {
		out.Passes = append(out.Passes, passBody{
			Name: p.Name, Target: p.Target, Database: p.Database, State: string(p.State),
			Degraded: p.Degraded, Drift: p.Drift, DriftError: p.DriftError,
			Sweeps: p.Sweeps, LastSweepStarted: when(p.LastSweepStarted), LastSweepEnded: when(p.LastSweepEnded),
			LastSweepRows: p.LastSweepRows, LastSweepReason: string(p.LastSweepReason), LastWorkRemains: p.LastWorkRemains,
			TotalRows: p.TotalRows, TotalSkipped: p.TotalSkipped, Failures: p.Failures,
			ConsecutiveFailures: p.ConsecutiveFailures, Restarts: p.Restarts, LastError: p.LastError,
			NextSweep: when(p.NextSweep), Pace: paceOf(p.Pace),
			BatchSize: p.BatchSize, BatchDelay: p.BatchDelay.String(), SweepInterval: p.SweepInterval.String(),
			PacingOverride: p.PacingOverride, Paused: p.Paused,
			ExpiredPartitionsLeft: p.ExpiredPartitionsLeft, ExpiredPartitionsReason: p.ExpiredPartitionsReason,
		})
	}
	for db, s := range st.Slots {
		out.Slots[db] = slotsBody{InUse: s.InUse, Capacity: s.Capacity}
	}
	return out
}

// passes answers GET /passes with every pass's status.
func (h *Handler) passes(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, passesOf(h.cfg.Runtime.Status()))
}
