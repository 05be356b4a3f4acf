package mysql

import (
	"context"
	"time"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes/driver"
)

// partitions refuses a pass's partitions: section, saying why.
var partitions = driver.NoPartitions{Reason: "retiring partitions is implemented for PostgreSQL only (MySQL and MariaDB drop partitions with ALTER TABLE ... DROP PARTITION, which retention does not issue yet); remove partitions: from the pass"}

// PartitionedTable refuses (see partitions).
func (Driver) PartitionedTable(ctx context.Context, db bun.IDB, table string) (driver.PartitionedTable, error) {
	return partitions.PartitionedTable(ctx, db, table)
}

// ExpiredPartitions refuses (see partitions).
func (Driver) ExpiredPartitions(ctx context.Context, db bun.IDB, table string, cutoff any) ([]driver.Partition, error) {
	return partitions.ExpiredPartitions(ctx, db, table, cutoff)
}

// DetachPartition refuses (see partitions).
func (Driver) DetachPartition(ctx context.Context, db bun.IDB, table string, p driver.Partition, how driver.Detach) error {
	return partitions.DetachPartition(ctx, db, table, p, how)
}

// DisposeDetached refuses (see partitions).
func (Driver) DisposeDetached(ctx context.Context, db bun.IDB, p driver.Partition, mode, schema string, lockTimeout time.Duration) error {
	return partitions.DisposeDetached(ctx, db, p, mode, schema, lockTimeout)
}

// SchemaExists refuses (see partitions).
func (Driver) SchemaExists(ctx context.Context, db bun.IDB, schema string) (bool, error) {
	return partitions.SchemaExists(ctx, db, schema)
}
