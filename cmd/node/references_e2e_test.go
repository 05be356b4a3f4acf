// End-to-end test of a table that references the pass's table and is not listed under children.
package main

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/retentionkit/retention/passes"
)

// TestUnlistedReferenceHeldNotContended: export_job references audit_log with a plain
// foreign key and is not listed under children. `validate` says so, naming the table,
// the constraint (PostgreSQL) and the children: entry to add, and exits 2 under
// strict_references; `sweep --drain` deletes the rest, ends with stop reason held (not
// contended, not drained), and logs one summary of the held rows per sweep with their
// count by cause instead of a warning per row; the next sweep ends held too.
func TestUnlistedReferenceHeldNotContended(t *testing.T) {
	t.Parallel()
	eachDriver(t, func(t *testing.T, e *env) {
		p := e.prefix
		e.exec(`CREATE TABLE ` + p + `export_job (id BIGINT PRIMARY KEY, audit_id BIGINT NOT NULL REFERENCES ` + p + `audit_log (id))`)
		t.Cleanup(func() { e.exec(`DROP TABLE IF EXISTS ` + p + `export_job`) })
		e.seed(600)
		e.exec(`INSERT INTO ` + p + `export_job (id, audit_id) SELECT id, id FROM ` + p + `audit_log WHERE id % 9 = 4`)
		// The rows the export jobs hold: expired, done, not on legal hold.
		held := e.count("id % 9 = 4 AND id % 10 <> 0 AND state = 'done' AND id % 50 <> 1")
		path := e.config("", "")

		r := retention(t, "validate", "--config", path)
		entry := "- { table: " + p + "export_job, foreign_key: audit_id, on_delete: block }"
		want := []string{"table " + p + "export_job references " + p + "audit_log", entry}
		// The constraint is named when the driver's catalog names it (SQLite's does not).
		constraint := e.referenceConstraint(p+"audit_log", p+"export_job")
		if constraint != "" {
			want = append(want, "constraint "+constraint)
		}
		if r.code != 0 {
			t.Fatalf("validate: exit %d, want 0 with a warning\n%s", r.code, r.stderr)
		}
		for _, w := range want {
			if !strings.Contains(r.stderr, w) {
				t.Errorf("validate does not say %q:\n%s", w, r.stderr)
			}
		}
		strict := e.config("    strict_references: true", "")
		if r := retention(t, "validate", "--config", strict); r.code != 2 || !strings.Contains(r.stderr, entry) {
			t.Errorf("validate with strict_references: exit %d, want 2 naming %q\n%s", r.code, entry, r.stderr)
		}

		r = retention(t, "sweep", "--drain", "--progress", "never", "--config", path)
		if r.code != 0 {
			t.Fatalf("sweep --drain: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		summary := lastLine(r.stdout)
		if fields := strings.Fields(summary); len(fields) == 0 || fields[len(fields)-1] != "held" {
			t.Errorf("the drain's summary %q does not end held\n%s", summary, r.stdout)
		}
		var summaries []string
		for _, line := range strings.Split(r.stderr, "\n") {
			if strings.Contains(line, "level=warning") && strings.Contains(line, "row skipped") {
				t.Fatalf("a warning per row:\n%s", line)
			}
			if strings.Contains(line, "rows held in place") {
				summaries = append(summaries, line)
			}
		}
		if len(summaries) != 1 || !strings.Contains(summaries[0], "level=warning") || !strings.Contains(summaries[0], "held="+strconv.Itoa(held)) {
			t.Fatalf("held-row summaries %q, want one warning counting %d rows\n%s", summaries, held, r.stderr)
		}
		cause := "table " + p + "export_job: " + strconv.Itoa(held)
		if constraint != "" {
			cause = "constraint " + constraint + " on " + p + "export_job: " + strconv.Itoa(held)
		}
		if !strings.Contains(summaries[0], cause) {
			t.Errorf("the summary %q does not name %q", summaries[0], cause)
		}
		if left := e.count("id % 10 <> 0 AND state = 'done' AND id % 50 <> 1"); left != held {
			t.Errorf("%d expired rows left, want the %d the export jobs hold", left, held)
		}

		// The next sweep leaves the quarantined rows out: it ends held as well, and says so
		// at info, since the rows are no news.
		again := retention(t, "sweep", "--progress", "never", "--config", path)
		if fields := strings.Fields(lastLine(again.stdout)); again.code != 0 || len(fields) == 0 || fields[len(fields)-1] != "held" {
			t.Errorf("the next sweep: exit %d, summary %q; want 0 and held\n%s", again.code, lastLine(again.stdout), again.stderr)
		}
		if !strings.Contains(again.stderr, `level=info msg="rows held in place, by cause: in quarantine, not due: `+strconv.Itoa(held)) {
			t.Errorf("the next sweep does not count the %d rows in quarantine at info:\n%s", held, again.stderr)
		}
	})
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// referenceConstraint is the name the driver's catalog gives the foreign key from table
// from into table to, "" when the catalog names none.
func (e *env) referenceConstraint(to, from string) string {
	e.t.Helper()
	d, err := passes.DriverFor(e.db)
	if err != nil {
		e.t.Fatal(err)
	}
	refs, err := d.References(context.Background(), e.db, to)
	if err != nil {
		e.t.Fatal(err)
	}
	for _, r := range refs {
		if r.Table == from {
			return r.Constraint
		}
	}
	e.t.Fatalf("the catalog lists no reference from %s to %s among %+v", from, to, refs)
	return ""
}

// culpritTable runs del, a delete the database must refuse, in a transaction it rolls
// back, and returns the table the driver reads from the refusal ("" when the database
// names none), so a test expects a name exactly where the driver can give one.
func (e *env) culpritTable(del string) string {
	e.t.Helper()
	d, err := passes.DriverFor(e.db)
	if err != nil {
		e.t.Fatal(err)
	}
	tx, err := e.db.BeginTx(context.Background(), nil)
	if err != nil {
		e.t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	if _, err = tx.ExecContext(context.Background(), del); err == nil {
		e.t.Fatalf("%s was not refused", del)
	}
	_, table := d.Culprit(err)
	return table
}
