package passtest

import (
	"context"
	"testing"
	"time"

	"github.com/retentionkit/retention/core"
	"github.com/retentionkit/retention/passes"
)

// driftBehaviours: a table or column the pass was configured with that goes away under
// a running node is configuration drift (core.ErrSchemaDrift), which supervision retries
// without counting toward the restart limit, not an ordinary failure. The driver is
// what recognises its database's way of saying so.
func driftBehaviours() []behaviour {
	return []behaviour{
		{name: "a table renamed away is drift", run: func(t *testing.T, db *DB) {
			driftAfter(t, db, "ALTER TABLE audit_log RENAME TO audit_log_away")
		}},
		{name: "a column renamed away is drift", run: func(t *testing.T, db *DB) {
			driftAfter(t, db, "ALTER TABLE audit_log RENAME COLUMN occurred_at TO occurred_away")
		}},
	}
}

// driftAfter builds the audit pass, runs change, and expects the next batch to fail
// with drift and to delete nothing.
func driftAfter(t *testing.T, db *DB, change string) {
	a := newAudit(t, db, passes.TimestampNative)
	a.log(1, auditCutoff.Add(-time.Hour), "done")
	tbl, err := passes.NewTable(db.DB, "audit-log", a.spec())
	if err != nil {
		t.Fatal(err)
	}
	a.exec(change)
	ctx := context.Background()
	p, err := tbl.Factory()(ctx)
	if err != nil {
		t.Fatal(err)
	}
	n, err := p.PurgeBatch(ctx, 10, auditCutoff)
	if !core.IsSchemaDrift(err) {
		t.Fatalf("PurgeBatch after %q = %d, %v; want configuration drift", change, n, err)
	}
	if n != 0 {
		t.Fatalf("PurgeBatch after %q deleted %d rows", change, n)
	}
}
