package passtest

import (
	"context"
	"strings"
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
		{name: "a held row's error names the table that holds it", run: culprit, skip: func(target Target) string {
			if target.NoCulprits {
				return target.Name + " names no table or constraint in a row's error"
			}
			return ""
		}},
	}
}

// culprit fails a row's delete on a reference from a table the pass does not know and
// expects the row's error to name that table and its constraint, which is what the
// quarantine and the log show an operator.
func culprit(t *testing.T, db *DB) {
	a := newAudit(t, db, passes.TimestampNative)
	a.log(6, auditCutoff.Add(-time.Hour), "done")
	a.exec("INSERT INTO unlisted (id, audit_log_id) VALUES (1, 6)")
	_, err := db.ExecContext(context.Background(), "DELETE FROM audit_log WHERE id = 6")
	if err == nil {
		t.Fatal("the delete of a referenced row succeeded")
	}
	re := passes.NewRowError([]any{int64(6)}, err)
	// The suite's own schema qualifies the table on a server that has schemas.
	if (re.Table != "unlisted" && !strings.HasSuffix(re.Table, ".unlisted")) || re.Constraint == "" {
		t.Fatalf("row error names table %q and constraint %q; want table unlisted and its constraint (%v)", re.Table, re.Constraint, err)
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
