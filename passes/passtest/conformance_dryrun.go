package passtest

import (
	"context"
	"testing"
	"time"

	"github.com/retentionkit/retention/passes"
)

// dryRunBehaviours: the dry run counts exactly what the sweep then deletes, and the
// expired rows a block child holds.
func dryRunBehaviours() []behaviour {
	return []behaviour{{name: "matches the sweep", run: dryRunMatches}}
}

func dryRunMatches(t *testing.T, db *DB) {
	a := newAudit(t, db, passes.TimestampNative)
	for id := 1; id <= 40; id++ {
		state := []string{"done", "failed", "pending"}[id%3]
		a.log(id, auditCutoff.Add(time.Duration(20-id)*time.Minute), state)
	}
	a.exec("INSERT INTO legal_hold (id, audit_log_id) VALUES (1, 22), (2, 25), (3, 2)")
	tbl := a.table(a.spec())
	dry, err := tbl.DryRun(context.Background(), auditCutoff)
	if err != nil {
		t.Fatal(err)
	}
	before := len(a.ids("audit_log"))
	res := Sweep(t, tbl, 7, auditCutoff)
	if int64(res.Deleted) != dry.Eligible || int64(before-len(a.ids("audit_log"))) != dry.Eligible {
		t.Fatalf("dry run %+v, sweep deleted %d", dry, res.Deleted)
	}
	if dry.Blocked != 2 { // 22 and 25 are expired and done/failed; 2 is not expired
		t.Fatalf("blocked = %d, want 2", dry.Blocked)
	}
	again, err := tbl.DryRun(context.Background(), auditCutoff)
	if err != nil || again.Eligible != 0 {
		t.Fatalf("after the sweep the dry run finds %d (%v)", again.Eligible, err)
	}
}
