package passes

import (
	"fmt"
	"time"

	"github.com/retentionkit/retention/core"
)

// The defaults DefaultOptions returns.
const (
	DefaultBatchSize          = 500
	DefaultBatchDelay         = 0
	DefaultSweepInterval      = time.Hour
	DefaultMaxStartupStagger  = time.Minute
	DefaultMaxBatchesPerSweep = 100
	DefaultBatchTimeout       = time.Minute
)

// Options say how a pass is swept. Zero values mean something (a zero BatchDelay is no
// pause, a zero MaxStartupStagger starts every pass at once), so start from
// DefaultOptions rather than from the zero value.
type Options struct {
	// RetentionPeriod is how long a row is kept. Nil keeps everything and runs no sweep:
	// deleting data is a decision made explicitly, so "off" needs no second switch.
	RetentionPeriod *time.Duration
	// BatchSize is the most rows one batch deletes, and the signal that tells a drained
	// backlog (fewer came back) from a full one. Default 500.
	BatchSize int
	// BatchDelay is the pause between two batches of one sweep, holding no admission
	// slot, so a large backlog deleted flat out cannot starve the workload sharing the
	// database. Default 0.
	BatchDelay time.Duration
	// SweepInterval is the longest wait between sweeps; see EffectiveInterval. Default 1h.
	SweepInterval time.Duration
	// MaxStartupStagger is the window first sweeps are spread across; see StaggerOffset.
	// Zero starts every pass at once. Default 1m.
	MaxStartupStagger time.Duration
	// MaxBatchesPerSweep bounds one sweep. Reaching it is not an error: the sweep reports
	// that work remains and the next sweep continues. Under adaptive pacing, whose
	// batches are smaller, the bound is the same number of rows: MaxBatchesPerSweep x
	// BatchSize. Zero (Unbounded) lets one sweep run until the backlog is gone: meant
	// for adaptive pacing, which keeps the workload's latency bounded while it drains.
	// Default 100.
	MaxBatchesPerSweep int
	// BatchTimeout bounds one PurgeBatch through its context, so a hung batch cannot hold
	// an admission slot forever; it is reported as cancelled. Zero means no bound.
	// Default 1m.
	BatchTimeout time.Duration
	// Pacing chooses how the pace is set: PacingFixed (BatchSize and BatchDelay as
	// given) or PacingAdaptive (a controller picks each batch's size up to BatchSize
	// and each pause from BatchDelay up, from the workload's latency; see
	// docs/pacing.md). Empty means PacingFixed.
	Pacing Pacing
	// MaxReplicaLag is the replica lag above which an adaptive pass backs off. Zero
	// means DefaultMaxReplicaLag (1s).
	MaxReplicaLag time.Duration
	// MaxBusySessions, when above 0, backs an adaptive pass off whenever the database's
	// other busy sessions (their p75 over two seconds) exceed it, whatever was usual
	// when the pass learned its baseline: pt-online-schema-change's --max-load. 0 (the
	// default) sets no such limit, and the busy sessions are judged against their
	// baseline alone. SQLite shows no sessions, so it has no effect there.
	MaxBusySessions int
	// CommitProbe adds the commit probe (a one-record write and its commit, timed ten
	// times a second; PostgreSQL only) to an adaptive pass's signals. Off by default:
	// in every benchmark run it cost a third to two thirds of the drain rate for a
	// foreground p99 gain no run could tell from its own noise (docs/pacing.md). Turn it
	// on where the application's commits, not its reads, are what the drain delays.
	CommitProbe bool
}

// Unbounded is the MaxBatchesPerSweep of a sweep that runs until the backlog is gone.
const Unbounded = 0

// DefaultMaxReplicaLag is Options.MaxReplicaLag when it is zero.
const DefaultMaxReplicaLag = time.Second

// Pacing is how a pass's pace is set.
type Pacing string

// The pacing modes.
const (
	// PacingFixed deletes BatchSize rows per batch and pauses BatchDelay: the pace the
	// operator chose, whatever the database is going through.
	PacingFixed Pacing = "fixed"
	// PacingAdaptive lets a controller pick the pace within those bounds from the
	// workload's latency, the sessions the sweep blocks and replica lag.
	PacingAdaptive Pacing = "adaptive"
)

// ParsePacing reads a pacing mode as configuration spells it; "" is PacingFixed.
func ParsePacing(s string) (Pacing, error) {
	switch Pacing(s) {
	case "", PacingFixed:
		return PacingFixed, nil
	case PacingAdaptive:
		return PacingAdaptive, nil
	}
	return "", fmt.Errorf("want %q or %q, got %q", PacingFixed, PacingAdaptive, s)
}

// Adaptive reports whether the pass is paced by the controller.
func (o Options) Adaptive() bool { return o.Pacing == PacingAdaptive }

// Bounded reports whether a sweep ends at MaxBatchesPerSweep.
func (o Options) Bounded() bool { return o.MaxBatchesPerSweep != Unbounded }

// ReplicaLagLimit is MaxReplicaLag with its default.
func (o Options) ReplicaLagLimit() time.Duration {
	if o.MaxReplicaLag <= 0 {
		return DefaultMaxReplicaLag
	}
	return o.MaxReplicaLag
}

// DefaultOptions returns the defaults: no retention (so no sweep), batches of 500, no
// delay, an hourly interval, a one-minute startup stagger, 100 batches per sweep and a
// one-minute batch timeout.
func DefaultOptions() Options {
	return Options{
		BatchSize:          DefaultBatchSize,
		BatchDelay:         DefaultBatchDelay,
		SweepInterval:      DefaultSweepInterval,
		MaxStartupStagger:  DefaultMaxStartupStagger,
		MaxBatchesPerSweep: DefaultMaxBatchesPerSweep,
		BatchTimeout:       DefaultBatchTimeout,
	}
}

// Retain returns d as a RetentionPeriod value, for
// Options{RetentionPeriod: passes.Retain(30 * 24 * time.Hour)}.
func Retain(d time.Duration) *time.Duration { return &d }

// Enabled reports whether the pass sweeps at all.
func (o Options) Enabled() bool { return o.RetentionPeriod != nil }

// Cutoff is the instant before which a row is expired at now: now minus RetentionPeriod.
// It is the one place that formula lives, so a sweep, a dry run, a backlog count and the
// CLI cannot disagree about which rows are due. With no RetentionPeriod (the pass keeps
// everything) it is the zero time, which no row predates, so a caller that forgot to
// check Enabled deletes and counts nothing rather than everything.
func (o Options) Cutoff(now time.Time) time.Time {
	if o.RetentionPeriod == nil {
		return time.Time{}
	}
	return now.Add(-*o.RetentionPeriod)
}

// EffectiveInterval is the smaller of SweepInterval and RetentionPeriod, so a row
// outlives its retention by at most one interval. With no retention it is SweepInterval.
func (o Options) EffectiveInterval() time.Duration {
	if o.RetentionPeriod != nil && *o.RetentionPeriod < o.SweepInterval {
		return *o.RetentionPeriod
	}
	return o.SweepInterval
}

// Validate returns every problem with o at once, as a *core.ValidationError whose
// fields are the option names and whose every message names the pass, or nil.
func (o Options) Validate(name string) error {
	fields := map[string][]string{}
	add := func(field, format string, args ...any) {
		fields[field] = append(fields[field], fmt.Sprintf("pass %q: %s %s", name, field, fmt.Sprintf(format, args...)))
	}
	if name == "" {
		add("name", "must not be empty")
	}
	if o.RetentionPeriod != nil && *o.RetentionPeriod <= 0 {
		add("retention_period", "must be positive, got %v (leave it unset to keep everything)", *o.RetentionPeriod)
	}
	if o.BatchSize < 1 {
		add("batch_size", "must be at least 1, got %d", o.BatchSize)
	}
	if o.BatchDelay < 0 {
		add("batch_delay", "must not be negative, got %v", o.BatchDelay)
	}
	if o.SweepInterval <= 0 {
		add("sweep_interval", "must be positive, got %v", o.SweepInterval)
	}
	if o.MaxStartupStagger < 0 {
		add("max_startup_stagger", "must not be negative, got %v", o.MaxStartupStagger)
	}
	if o.MaxBatchesPerSweep < 0 {
		add("max_batches_per_sweep", "must not be negative, got %d (0 means unbounded)", o.MaxBatchesPerSweep)
	}
	if _, err := ParsePacing(string(o.Pacing)); err != nil {
		add("pacing", "must be %q or %q, got %q", PacingFixed, PacingAdaptive, o.Pacing)
	}
	if o.MaxReplicaLag < 0 {
		add("max_replica_lag", "must not be negative, got %v (0 means %v)", o.MaxReplicaLag, DefaultMaxReplicaLag)
	}
	if o.MaxBusySessions < 0 {
		add("max_busy_sessions", "must not be negative, got %d (0 means no limit)", o.MaxBusySessions)
	}
	if o.BatchTimeout < 0 {
		add("batch_timeout", "must not be negative, got %v (0 means no bound)", o.BatchTimeout)
	}
	if len(fields) == 0 {
		return nil
	}
	return core.NewValidationErrorMessage(fmt.Sprintf("pass %q has invalid options", name), fields)
}
