package postgres_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/retentionkit/retention/passes/driver"
	"github.com/retentionkit/retention/passes/driver/postgres"
	"github.com/retentionkit/retention/passes/passtest"
)

// TestReferencesNameTheConstraint: PostgreSQL's catalog names every foreign key (SQLite's
// names none), so References gives the name, which startup's warning about a table the
// pass does not list then shows; a CASCADE key is not a restricting one and is left out.
func TestReferencesNameTheConstraint(t *testing.T) {
	db := passtest.Postgres(t)
	ctx := context.Background()
	for _, s := range []string{
		"CREATE TABLE audit_log (id BIGINT PRIMARY KEY)",
		"CREATE TABLE unlisted (id BIGINT PRIMARY KEY, audit_log_id BIGINT NOT NULL REFERENCES audit_log (id))",
		"CREATE TABLE named (id BIGINT PRIMARY KEY, log_id BIGINT, CONSTRAINT held_by_named FOREIGN KEY (log_id) REFERENCES audit_log (id) ON DELETE RESTRICT)",
		"CREATE TABLE tag (id BIGINT PRIMARY KEY, audit_log_id BIGINT REFERENCES audit_log (id) ON DELETE CASCADE)",
	} {
		if _, err := db.ExecContext(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	refs, err := postgres.Driver{}.References(ctx, db.DB, "audit_log")
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(refs, func(a, b driver.Reference) int { return strings.Compare(a.Table, b.Table) })
	want := []struct{ table, constraint, column string }{
		{"named", "held_by_named", "log_id"},
		{"unlisted", "unlisted_audit_log_id_fkey", "audit_log_id"}, // PostgreSQL's own name for an unnamed key
	}
	if len(refs) != len(want) {
		t.Fatalf("references = %+v, want %d (named and unlisted, not the CASCADE tag)", refs, len(want))
	}
	for i, w := range want {
		if r := refs[i]; r.Table != w.table || r.Constraint != w.constraint || !slices.Equal(r.Columns, []string{w.column}) {
			t.Errorf("reference %d = %+v, want table %s through constraint %s (%s)", i, r, w.table, w.constraint, w.column)
		}
	}
}
