package passes

import (
	"context"
	"errors"

	"slices"
	"strings"

	"github.com/retentionkit/retention/passes/driver"
)

// checkPartitions refuses, at startup, a pass with partitions: whose table a whole
// partition could not be retired from with the row path's keep-set: not partitioned,
// not by range, not by exactly the pass's timestamp column, referenced by a table the
// pass does not declare (its rows would hold the partition: DETACH refuses, DROP ...
// CASCADE would take the constraint), a default partition with concurrently (PostgreSQL
// refuses that detach), a publication not allowed (subscribers keep retired rows). The
// filter, where and block child refusals need no database (TableSpec.Validate).
func (t *Table) checkPartitions(ctx context.Context, fail func(string, ...any)) {
	p := t.spec.Partitions
	if p == nil {
		return
	}
	info, err := t.drv.PartitionedTable(ctx, t.db, t.spec.Table)
	switch {
	case errors.Is(err, driver.ErrPartitionsUnsupported):
		fail("partitions: %v", err)
		return
	case err != nil:
		fail("partitions: reading how %s is partitioned: %v", t.spec.Table, err)
		return
	case !info.Partitioned:
		fail("partitions: %s is not a partitioned table (PARTITION BY RANGE (%s)); remove partitions: to delete its rows by batches", t.spec.Table, t.spec.Timestamp)
		return
	case info.Strategy != "range":
		fail("partitions: %s is partitioned by %s, not by range: only a range partition has an upper bound a cutoff can be compared with", t.spec.Table, info.Strategy)
		return
	}
	if !slices.Equal(info.KeyColumns, []string{t.spec.Timestamp}) {
		fail("partitions: %s is partitioned by %s, not by exactly the pass's timestamp column %s, so a partition's bounds say nothing about its rows' age",
			t.spec.Table, keyDescription(info.KeyColumns), t.spec.Timestamp)
	}
	for _, r := range info.References {
		if !t.declaredChild(r) {
			fail("partitions: foreign key %s of table %s (%s) references %s, and children does not declare that table: DETACH refuses while it references a row of the partition, and DROP ... CASCADE would drop the constraint itself; declare it under children (on_delete: delete or set_null) or drop the key",
				r.Constraint, r.Table, strings.Join(r.Columns, ", "), t.spec.Table)
		}
	}
	if info.DefaultPartition != "" && p.concurrently() {
		fail("partitions: %s has a default partition (%s), and PostgreSQL cannot detach a partition concurrently while one exists; set partitions.concurrently: false (a plain DETACH, an ACCESS EXCLUSIVE lock on %s for at most partitions.lock_timeout) or remove the default partition",
			t.spec.Table, info.DefaultPartition, t.spec.Table)
	}
	if p.concurrently() && !info.ConcurrentDetach {
		fail("partitions: this server cannot detach concurrently (PostgreSQL 14 or later can); set partitions.concurrently: false")
	}
	if p.mode() == PartitionArchive {
		switch ok, err := t.drv.SchemaExists(ctx, t.db, p.ArchiveSchema); {
		case err != nil:
			fail("partitions.archive_schema: checking that schema %s exists: %v", p.ArchiveSchema, err)
		case !ok:
			fail("partitions.archive_schema: schema %s does not exist, so a retired partition could not be moved there; create it first", p.ArchiveSchema)
		}
	}
	if len(info.DeleteTriggers) > 0 {
		fail("partitions: %s has the row-level DELETE trigger(s) %s, which a retired partition's rows never fire: a trigger that refuses or records a delete would see none; drop them or remove partitions:",
			t.spec.Table, strings.Join(info.DeleteTriggers, ", "))
	}
	if len(info.Publications) > 0 && !p.AllowPublication {
		fail("partitions: %s is in publication %s: logical subscribers would keep every row of a retired partition, since a detach is not replicated as deletes; set partitions.allow_publication: true to accept that",
			t.spec.Table, strings.Join(info.Publications, ", "))
	}
}

// keyDescription writes a partition key for a message.
func keyDescription(cols []string) string {
	parts := make([]string, len(cols))
	for i, c := range cols {
		parts[i] = c
		if c == "" {
			parts[i] = "an expression"
		}
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// declaredChild reports whether a direct delete or set_null child declares r's table
// with r's columns: the retire phase clears its rows before the partition goes.
func (t *Table) declaredChild(r driver.Reference) bool {
	for _, c := range t.children {
		if c.parent == nil && c.onDelete() != OnDeleteBlock && sameTable(c.spec.Table, r.Table) && slices.Equal(c.foreignKey(), r.Columns) {
			return true
		}
	}
	return false
}
