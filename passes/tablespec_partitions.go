package passes

import "time"

// PartitionMode says what a sweep does with a partition it has retired (detached from
// the swept table because every row in it is expired).
type PartitionMode string

// The partition modes.
const (
	// PartitionDrop drops the detached partition: its rows are gone, as row deletes
	// would have left them.
	PartitionDrop PartitionMode = "drop"
	// PartitionDetach leaves the detached partition as a table of its own, in its
	// schema, for the operator to keep, dump or drop: the swept table no longer holds
	// its rows.
	PartitionDetach PartitionMode = "detach"
	// PartitionArchive moves the detached partition to PartitionSpec.ArchiveSchema.
	PartitionArchive PartitionMode = "archive"
)

// DefaultPartitionLockTimeout is the lock_timeout of every partition statement when
// PartitionSpec.LockTimeout is zero: short enough that a detach waiting behind the
// workload gives up before the workload queues behind it.
const DefaultPartitionLockTimeout = time.Second

// PartitionSpec makes a table pass over a PostgreSQL range-partitioned table retire
// whole partitions whose every row is expired, before its row path deletes what is left
// (see table_partitions.go). The keep-set is the row path's: ValidateStartup refuses a
// table or a pass for which a whole partition could hold a row the pass keeps.
type PartitionSpec struct {
	// Mode is drop, detach or archive; empty means drop.
	Mode PartitionMode
	// ArchiveSchema is the schema an archived partition moves to (mode archive only).
	ArchiveSchema string
	// Concurrently detaches with DETACH PARTITION ... CONCURRENTLY, which never takes
	// an ACCESS EXCLUSIVE lock on the partitioned table; nil means true. PostgreSQL
	// refuses it on a table with a default partition, where it must be false.
	Concurrently *bool
	// LockTimeout is the lock_timeout of every partition statement; zero means
	// DefaultPartitionLockTimeout. A statement that waits longer gives up, and the
	// row path deletes that partition's rows instead.
	LockTimeout time.Duration
	// AllowPublication lets the pass retire partitions of a table in a publication:
	// logical subscribers keep the rows of a retired partition, as they see no deletes.
	AllowPublication bool
}

// mode is Mode with its default.
func (p *PartitionSpec) mode() PartitionMode {
	if p.Mode == "" {
		return PartitionDrop
	}
	return p.Mode
}

// concurrently is Concurrently with its default.
func (p *PartitionSpec) concurrently() bool { return p.Concurrently == nil || *p.Concurrently }

// lockTimeout is LockTimeout with its default.
func (p *PartitionSpec) lockTimeout() time.Duration {
	if p.LockTimeout == 0 {
		return DefaultPartitionLockTimeout
	}
	return p.LockTimeout
}

// validatePartitions adds the problems of s.Partitions that need no database: the
// fields themselves, and the pass settings a whole-partition retirement cannot honour
// (a partition would go with rows the filter, the where or a block child keeps).
func (s TableSpec) validatePartitions(add func(field, format string, args ...any), identifier func(field, value string)) {
	p := s.Partitions
	if p == nil {
		return
	}
	switch p.mode() {
	case PartitionDrop, PartitionDetach:
		if p.ArchiveSchema != "" {
			add("partitions.archive_schema", "applies to mode: archive only, not %s", p.mode())
		}
	case PartitionArchive:
		if p.ArchiveSchema == "" {
			add("partitions.archive_schema", "is required with mode: archive (the schema retired partitions move to)")
		} else {
			identifier("partitions.archive_schema", p.ArchiveSchema)
		}
	default:
		add("partitions.mode", "must be %q, %q or %q, got %s", PartitionDrop, PartitionDetach, PartitionArchive, quoteForMessage(string(p.Mode)))
	}
	switch {
	case p.LockTimeout < 0:
		add("partitions.lock_timeout", "must not be negative, got %v (0 means %v)", p.LockTimeout, DefaultPartitionLockTimeout)
	case p.LockTimeout > 0 && p.LockTimeout < time.Millisecond:
		add("partitions.lock_timeout", "must be at least 1ms (PostgreSQL reads 0ms as no timeout), got %v", p.LockTimeout)
	}
	const keeps = "a retired partition would take rows the pass must keep"
	if s.Filter != nil {
		add("partitions", "cannot be used with filter: %s (rows whose %s is not listed)", keeps, s.Filter.Column)
	}
	if s.Where != "" {
		add("partitions", "cannot be used with where: %s (rows the condition leaves out)", keeps)
	}
	for i, c := range s.Children {
		if c.OnDelete == OnDeleteBlock {
			add("partitions", "cannot be used with a block child (children[%d], %s): %s (rows it holds)", i, c.Table, keeps)
		}
	}
}
