package passes_test

import (
	"context"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/dbtest"
)

// TestTableUnlistedReferences: startup reads the foreign keys that point at the swept
// table and at its delete children from the catalog, and warns about each restricting
// one from a table children does not list, with the children: entry to add (block for
// the swept table, set_null under a child); strict_references turns the warnings into
// a failure. CASCADE keys, listed children and the references to a set_null child's
// rows (which are never deleted) are not reported; listing the tables as the warnings
// say silences them.
func TestTableUnlistedReferences(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := newFixture(t, db, passes.TimestampNative)
		f.exec("CREATE TABLE {p}attachment_note (id BIGINT PRIMARY KEY, attachment_id BIGINT REFERENCES {p}audit_attachment (id))")
		f.exec("CREATE TABLE {p}audit_tag (id BIGINT PRIMARY KEY, audit_log_id BIGINT REFERENCES {p}audit_log (id) ON DELETE CASCADE)")
		f.exec("CREATE TABLE {p}review_note (id BIGINT PRIMARY KEY, review_id BIGINT REFERENCES {p}audit_review (id))")
		t.Cleanup(func() {
			for _, table := range []string{"attachment_note", "audit_tag", "review_note"} {
				_, _ = db.ExecContext(context.Background(), "DROP TABLE IF EXISTS "+f.p+table)
			}
		})
		ctx := context.Background()
		// The warning names the constraint when the catalog does (whether it does is the
		// driver's: passes/driver/postgres, TestReferencesNameTheConstraint).
		through := "through a foreign key (audit_log_id)"
		if c := unlistedConstraint(t, db, f); c != "" {
			through = "through constraint " + c + " (audit_log_id)"
		}
		want := []string{
			"table " + f.p + "unlisted references " + f.p + "audit_log " + through,
			"add to the pass's children: - { table: " + f.p + "unlisted, foreign_key: audit_log_id, on_delete: block }",
			"table " + f.p + "attachment_note references " + f.p + "audit_attachment",
			"add to the children: of child " + f.p + "audit_attachment - { table: " + f.p + "attachment_note, foreign_key: attachment_id, on_delete: set_null }",
		}

		res := f.table(f.spec()).ValidateStartup(ctx)
		warnings := strings.Join(res.Warnings(), "\n")
		if res.Failed() {
			t.Fatalf("a declaration with unlisted references failed without strict_references: %s", res.Message())
		}
		for _, w := range want {
			if !strings.Contains(warnings, w) {
				t.Errorf("warnings do not say %q:\n%s", w, warnings)
			}
		}
		for _, quiet := range []string{"audit_tag", "review_note", "legal_hold references", "audit_review references"} {
			if strings.Contains(warnings, quiet) {
				t.Errorf("warnings name %s, which holds nothing or is listed:\n%s", quiet, warnings)
			}
		}

		strict := f.spec()
		strict.StrictReferences = true
		res = f.table(strict).ValidateStartup(ctx)
		if !res.Failed() || !strings.Contains(res.Message(), `pass "audit-log"`) {
			t.Fatalf("strict_references: failed %v %q, want a failure", res.Failed(), res.Message())
		}
		for _, w := range want {
			if !strings.Contains(res.Message(), w) {
				t.Errorf("the strict failure does not say %q:\n%s", w, res.Message())
			}
		}

		strict.Children = append(strict.Children, passes.ChildSpec{Table: f.p + "unlisted", ForeignKey: "audit_log_id", OnDelete: passes.OnDeleteBlock})
		strict.Children[0].Children = append(strict.Children[0].Children, passes.ChildSpec{Table: f.p + "attachment_note", ForeignKey: "attachment_id", OnDelete: passes.OnDeleteSetNull})
		res = f.table(strict).ValidateStartup(ctx)
		if res.Failed() || strings.Contains(strings.Join(res.Warnings(), "\n"), "references") {
			t.Fatalf("with the entries the warnings gave: failed %v %q, warnings %v", res.Failed(), res.Message(), res.Warnings())
		}
	})
}

// unlistedConstraint is the name db's catalog gives the foreign key from the fixture's
// unlisted table to audit_log, "" when it names none.
func unlistedConstraint(t *testing.T, db *bun.DB, f *fixture) string {
	t.Helper()
	d, err := passes.DriverFor(db)
	if err != nil {
		t.Fatal(err)
	}
	refs, err := d.References(context.Background(), db, f.p+"audit_log")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range refs {
		if r.Table == f.p+"unlisted" {
			return r.Constraint
		}
	}
	t.Fatalf("the catalog lists no reference from %sunlisted among %+v", f.p, refs)
	return ""
}
