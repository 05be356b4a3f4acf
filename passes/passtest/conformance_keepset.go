package passtest

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/retentionkit/retention/passes"
)

// keepSetBehaviours: the filter, the block child and the cutoff decide what stays; the
// delete children go with their parent, deepest first; set_null children stay with the
// reference cleared.
func keepSetBehaviours() []behaviour {
	return []behaviour{{name: "filter, children and block child", run: keepSet}}
}

func keepSet(t *testing.T, db *DB) {
	a := newAudit(t, db, passes.TimestampNative)
	a.log(1, auditCutoff.Add(-time.Second), "done")  // expired
	a.log(2, auditCutoff.Add(time.Second), "done")   // after the cutoff: kept
	a.log(3, auditCutoff, "done")                    // at the cutoff: kept
	a.log(4, auditCutoff.Add(-time.Hour), "pending") // filtered out: kept
	a.log(5, auditCutoff.Add(-2*time.Hour), "failed")
	a.log(6, auditCutoff.Add(-3*time.Hour), "done") // legal hold: kept
	a.exec("INSERT INTO legal_hold (id, audit_log_id) VALUES (1, 6)")
	a.log(7, auditCutoff.Add(-4*time.Hour), "done") // with children and a review
	a.exec("INSERT INTO audit_attachment (id, audit_log_id) VALUES (100, 7), (101, 7)")
	a.exec("INSERT INTO attachment_blob (id, attachment_id) VALUES (1000, 100), (1001, 101), (1002, 101)")
	a.exec("INSERT INTO audit_review (id, audit_log_id) VALUES (50, 7), (51, 2)")
	for id := 10; id < 30; id++ {
		a.log(id, auditCutoff.Add(-24*time.Hour-time.Duration(id)*time.Second), "done")
	}

	res := Sweep(t, a.table(a.spec()), 4, auditCutoff)

	a.requireIDs("audit_log", []int64{2, 3, 4, 6}, "fresh, filtered-out and held rows stay")
	if res.Deleted != 23 || len(res.Skipped) != 0 {
		t.Fatalf("sweep = %+v, want 23 deleted", res)
	}
	a.requireIDs("audit_attachment", nil, "delete children go with their parent")
	a.requireIDs("attachment_blob", nil, "grandchildren go with their parent")
	a.requireIDs("legal_hold", []int64{1}, "a block child is never deleted")
	refs := a.reviewRefs()
	if len(refs) != 2 || refs[0].Valid || !refs[1].Valid || refs[1].Int64 != 2 {
		t.Fatalf("review references = %v, want [nil 2]: set_null keeps the child and clears only expired parents", refs)
	}
}

// reviewRefs returns the audit_log_id of every review, in id order.
func (a *audit) reviewRefs() []sql.NullInt64 {
	a.t.Helper()
	rows, err := a.db.QueryContext(context.Background(), "SELECT audit_log_id FROM audit_review ORDER BY id")
	if err != nil {
		a.t.Fatal(err)
	}
	defer rows.Close()
	var refs []sql.NullInt64
	for rows.Next() {
		var r sql.NullInt64
		if err := rows.Scan(&r); err != nil {
			a.t.Fatal(err)
		}
		refs = append(refs, r)
	}
	if err := rows.Err(); err != nil {
		a.t.Fatal(err)
	}
	return refs
}
