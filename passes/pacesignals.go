package passes

import (
	"context"
	"time"
)

// PaceSignals are what an adaptive pass is paced by (see Options.Pacing): the
// workload's latency as a probe query sees it, its busy sessions, the sessions the
// sweep blocks, and replica lag. The pass actor calls them off its mailbox, between and during batches,
// never two at once. A registration without them is paced by its batch times alone.
type PaceSignals interface {
	// Probe runs the probe query once; the caller times it.
	Probe(ctx context.Context) error
	// Blocked counts the sessions the sweep's own backend blocks now. sweep is the pass
	// the sweep's Factory built; a sweep that cannot tell returns 0.
	Blocked(ctx context.Context, sweep Pass) (int, error)
	// BusySessions counts the database's other sessions busy now (see
	// driver.Pace.BusySessions), the sweep's own left out; false when the database
	// shows none.
	BusySessions(ctx context.Context, sweep Pass) (int, bool, error)
	// CommitProbe writes and commits once (see driver.Pace.CommitProbe); the caller
	// times it. false: the database has no commit probe.
	CommitProbe(ctx context.Context) (bool, error)
	// ReplicaLag returns the largest lag of the database's replicas, and false when it
	// has none (or the database has no such notion). An error wrapping
	// ErrReplicaLagUnknown is a replica whose lag cannot be told, which counts as
	// lagging; any other error leaves the signal unknown.
	ReplicaLag(ctx context.Context) (time.Duration, bool, error)
}

// BackendPID is implemented by a sweep that runs its batches on one PostgreSQL
// backend, so the sessions that backend blocks can be counted; 0 until it has one.
type BackendPID interface {
	BackendPID() int
}
