package passtest

import (
	"testing"
	"time"

	"github.com/retentionkit/retention/passes"
)

// bisectionBehaviours: a row a table the pass does not know still references is
// isolated, reported skipped and kept, and the rest of its batch is deleted, whether a
// batch is one transaction (with children) or one statement (without).
func bisectionBehaviours() []behaviour {
	return []behaviour{
		{name: "skips only the held row with children", run: func(t *testing.T, db *DB) { bisection(t, db, (*audit).spec) }},
		{name: "skips only the held row without children", run: func(t *testing.T, db *DB) { bisection(t, db, (*audit).bare) }},
	}
}

func bisection(t *testing.T, db *DB, spec func(*audit) passes.TableSpec) {
	a := newAudit(t, db, passes.TimestampNative)
	for id := 1; id <= 13; id++ {
		a.log(id, auditCutoff.Add(-time.Duration(100-id)*time.Minute), "done")
	}
	a.exec("INSERT INTO unlisted (id, audit_log_id) VALUES (1, 6)")
	res := Sweep(t, a.table(spec(a)), 5, auditCutoff)
	a.requireIDs("audit_log", []int64{6}, "only the row an unlisted table references stays")
	if res.Deleted != 12 || len(res.Skipped) != 1 || asInt64(res.Skipped[0]) != 6 {
		t.Fatalf("sweep = %+v, want 12 deleted and 6 skipped", res)
	}
	if res.Batches != 3 {
		t.Fatalf("batches = %d: the skipped row ended the sweep early or cost a batch", res.Batches)
	}
}
