package driver

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"
)

// Partitions is what a table pass with partitions: asks of the database: the catalog
// facts its startup refusals are made of, the partitions a cutoff has wholly expired,
// and the statements that retire one. The reference behaviour is PostgreSQL's
// declarative range partitioning; a driver without it refuses every method with an
// error wrapping ErrPartitionsUnsupported that says why.
type Partitions interface {
	// PartitionedTable reads how table is partitioned, and what would make retiring
	// its partitions unsafe.
	PartitionedTable(ctx context.Context, db bun.IDB, table string) (PartitionedTable, error)
	// ExpiredPartitions lists table's direct partitions whose upper bound, compared by
	// the database in the partition column's own type, is at or below cutoff (the row
	// path's cutoff value, which is compared with that column the same way), oldest
	// first, and, whatever its bound, any partition left pending a detach. A bound the
	// driver cannot read is never expired.
	ExpiredPartitions(ctx context.Context, db bun.IDB, table string, cutoff any) ([]Partition, error)
	// DetachPartition detaches p from table on db, outside any transaction, waiting for
	// locks at most how.LockTimeout.
	DetachPartition(ctx context.Context, db bun.IDB, table string, p Partition, how Detach) error
	// DisposeDetached drops the detached p (drop), or moves it to schema (archive), or
	// leaves it (detach), waiting for locks at most lockTimeout.
	DisposeDetached(ctx context.Context, db bun.IDB, p Partition, mode, schema string, lockTimeout time.Duration) error
	// SchemaExists reports whether schema exists, for an archive schema checked at startup.
	SchemaExists(ctx context.Context, db bun.IDB, schema string) (bool, error)
}

// ErrPartitionsUnsupported is wrapped by every Partitions method of a driver whose
// database cannot retire partitions.
var ErrPartitionsUnsupported = errors.New("partitions are not supported")

// ErrPartitionContended is wrapped by a partition statement that gave up waiting for a
// lock (its lock timeout, or a deadlock it lost): the workload holds the partition, and
// its rows are left to the row path.
var ErrPartitionContended = errors.New("partition contended")

// ErrPartitionGone is wrapped by a partition statement that found the partition no
// longer there, or no longer a partition of the table: another sweep of the table (a
// drain helper, maybe on another member) retired it first.
var ErrPartitionGone = errors.New("partition gone")

// PartitionedTable is how a table is partitioned, as its catalog says.
type PartitionedTable struct {
	// Partitioned is false for a plain table.
	Partitioned bool
	// Strategy is "range", "list" or "hash".
	Strategy string
	// KeyColumns are the partition key's columns; "" for an expression.
	KeyColumns []string
	// ColumnType is the type of the partition key's one column.
	ColumnType string
	// DefaultPartition names the default partition; "" when there is none.
	DefaultPartition string
	// Publications lists the publications that replicate the table or a partition.
	Publications []string
	// References are the foreign keys (of any action) into the table or one of its
	// partitions from tables outside it.
	References []Reference
	// ConcurrentDetach is whether the server can detach concurrently (PostgreSQL 14+).
	ConcurrentDetach bool
	// DeleteTriggers names the user's row-level DELETE triggers on the table or a
	// partition ("table.trigger"): a retired partition's rows never fire them.
	DeleteTriggers []string
}

// Partition is one partition of a partitioned table.
type Partition struct {
	// Schema and Name name the partition's table.
	Schema, Name string
	// Lower and Upper are its bounds as the catalog writes them (MINVALUE, MAXVALUE).
	Lower, Upper string
	// Pending is whether a detach of it was begun and not finished.
	Pending bool
	// Expired is whether its upper bound is at or below the cutoff it was listed at.
	Expired bool
	// EstimatedRows is the planner's estimate of its rows, not a count (-1: none).
	EstimatedRows float64
}

// Detach is how DetachPartition detaches.
type Detach struct {
	// Concurrently never takes an ACCESS EXCLUSIVE lock on the partitioned table.
	Concurrently bool
	// Finalize finishes a detach that was begun concurrently and interrupted.
	Finalize bool
	// LockTimeout bounds every lock wait of the statement.
	LockTimeout time.Duration
}

// PartitionsRefused returns the error every Partitions method of a driver without
// partitions returns: ErrPartitionsUnsupported with the database's reason.
func PartitionsRefused(reason string) error {
	return fmt.Errorf("%w: %s", ErrPartitionsUnsupported, reason)
}

// NoPartitions is the Partitions of a driver whose database cannot retire partitions,
// for it to embed: every method refuses with Reason.
type NoPartitions struct {
	// Reason says why, in the database's words.
	Reason string
}

// PartitionedTable refuses.
func (n NoPartitions) PartitionedTable(context.Context, bun.IDB, string) (PartitionedTable, error) {
	return PartitionedTable{}, PartitionsRefused(n.Reason)
}

// ExpiredPartitions refuses.
func (n NoPartitions) ExpiredPartitions(context.Context, bun.IDB, string, any) ([]Partition, error) {
	return nil, PartitionsRefused(n.Reason)
}

// DetachPartition refuses.
func (n NoPartitions) DetachPartition(context.Context, bun.IDB, string, Partition, Detach) error {
	return PartitionsRefused(n.Reason)
}

// DisposeDetached refuses.
func (n NoPartitions) DisposeDetached(context.Context, bun.IDB, Partition, string, string, time.Duration) error {
	return PartitionsRefused(n.Reason)
}

// SchemaExists refuses.
func (n NoPartitions) SchemaExists(context.Context, bun.IDB, string) (bool, error) {
	return false, PartitionsRefused(n.Reason)
}
