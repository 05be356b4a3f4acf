package passtest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes"
)

// cancellationBehaviours: a batch cancelled in the middle of its transaction returns
// the cancellation and leaves nothing half deleted.
func cancellationBehaviours() []behaviour {
	return []behaviour{{name: "batch leaves nothing half done", run: cancelledBatch}}
}

func cancelledBatch(t *testing.T, db *DB) {
	a := newAudit(t, db, passes.TimestampNative)
	a.log(1, auditCutoff.Add(-time.Hour), "done")
	a.exec("INSERT INTO audit_attachment (id, audit_log_id) VALUES (100, 1)")
	a.exec("INSERT INTO attachment_blob (id, attachment_id) VALUES (1000, 100)")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Cancel the batch right after its first child delete ran inside the transaction.
	hooked := db.WithQueryHook(cancelAfterDelete{table: "attachment_blob", cancel: cancel})
	tbl, err := passes.NewTable(hooked, "audit-log", a.spec())
	if err != nil {
		t.Fatal(err)
	}
	p, err := tbl.Factory()(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.PurgeBatch(ctx, 10, auditCutoff); !errors.Is(err, context.Canceled) {
		t.Fatalf("PurgeBatch = %v, want the cancellation", err)
	}
	a.requireIDs("attachment_blob", []int64{1000}, "the cancelled transaction must not leave a partial delete")
	a.requireIDs("audit_log", []int64{1}, "the cancelled batch deletes nothing")
}

// cancelAfterDelete cancels a context once a DELETE on table has run.
type cancelAfterDelete struct {
	table  string
	cancel context.CancelFunc
}

func (h cancelAfterDelete) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context {
	return ctx
}

func (h cancelAfterDelete) AfterQuery(_ context.Context, e *bun.QueryEvent) {
	if isDelete(e.Query, h.table) {
		h.cancel()
	}
}
