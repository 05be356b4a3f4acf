package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestQuarantineEndToEnd: a row an unlisted table references is counted in one held-row
// summary over two sweeps (naming the table on PostgreSQL), is listed by `quarantine list` and
// counted by `status`, and leaves quarantine on the attempt after its reference is
// removed, which deletes it. `quarantine release` takes a row out by key.
func TestQuarantineEndToEnd(t *testing.T) {
	t.Parallel()
	eachDriver(t, func(t *testing.T, e *env) {
		p := e.prefix
		e.exec(`CREATE TABLE ` + p + `invoice (id BIGINT PRIMARY KEY, audit_log_id BIGINT NOT NULL REFERENCES ` + p + `audit_log (id))`)
		t.Cleanup(func() {
			for _, table := range []string{"invoice", "quarantine"} {
				_, _ = e.db.ExecContext(context.Background(), "DROP TABLE IF EXISTS "+p+table)
			}
		})
		old := time.Now().Add(-40 * 24 * time.Hour).Unix()
		for id := 1; id <= 5; id++ {
			e.exec(fmt.Sprintf("INSERT INTO %saudit_log (id, occurred_at, state) VALUES (%d, %d, 'done')", p, id, old-int64(id)))
		}
		e.exec("INSERT INTO " + p + "invoice (id, audit_log_id) VALUES (1, 3)")
		path := e.config("", "")

		first := retention(t, "sweep", "--config", path, "--drain")
		second := retention(t, "sweep", "--config", path, "--drain")
		if first.code != 0 || second.code != 0 {
			t.Fatalf("sweeps: exit %d, %d: %s%s", first.code, second.code, first.stderr, second.stderr)
		}
		// One warning about the held rows, from the sweep that met the row, none per row; the
		// key is in `quarantine list` below.
		warnings := strings.Count(first.stderr+second.stderr, `level=warning msg="rows held in place`)
		if warnings != 1 || !strings.Contains(first.stderr, "held=1") || strings.Contains(first.stderr+second.stderr, "row skipped") {
			t.Fatalf("%d held-row summaries over two sweeps, want 1 counting 1 row and no per-row warning:\n%s\n---\n%s", warnings, first.stderr, second.stderr)
		}
		// Whether the summary can name the referencing table is the driver's: it names it
		// when the database's own refusal of that delete does.
		named := e.culpritTable("DELETE FROM "+p+"audit_log WHERE id = 3") != ""
		if named && !strings.Contains(first.stderr, "on "+p+"invoice: 1") {
			t.Fatalf("the summary does not name the referencing table:\n%s", first.stderr)
		}
		if !strings.Contains(second.stderr, "1 rows in quarantine for pass audit-log") {
			t.Fatalf("the second sweep has no quarantine summary:\n%s", second.stderr)
		}
		if left := e.count("1 = 1"); left != 1 {
			t.Fatalf("%d rows left, want the referenced one", left)
		}

		list := retention(t, "quarantine", "list", "--config", path)
		if list.code != 0 || !strings.Contains(list.stdout, "audit-log") || !strings.Contains(list.stdout, "[3]") || (named && !strings.Contains(list.stdout, p+"invoice")) {
			t.Fatalf("quarantine list: exit %d:\n%s%s", list.code, list.stdout, list.stderr)
		}
		if got := statusQuarantined(t, path); got != "1" {
			t.Fatalf("status QUARANTINED = %q, want 1", got)
		}

		// The reference goes and the row's backoff is over (its next attempt moved to the
		// past, as the hours would): the next sweep deletes it and it leaves quarantine.
		e.exec("DELETE FROM " + p + "invoice")
		e.exec("UPDATE "+p+"quarantine SET next_attempt = ?", time.Now().Add(-time.Minute).UTC())
		third := retention(t, "sweep", "--config", path, "--drain")
		if third.code != 0 || e.count("1 = 1") != 0 || strings.Contains(third.stderr, `level=warning msg="rows held in place`) {
			t.Fatalf("third sweep: exit %d, %d rows left:\n%s", third.code, e.count("1 = 1"), third.stderr)
		}
		if list := retention(t, "quarantine", "list", "--config", path); !strings.Contains(list.stdout, "no rows in quarantine") {
			t.Fatalf("quarantine list after the delete:\n%s", list.stdout)
		}
		if got := statusQuarantined(t, path); got != "0" {
			t.Fatalf("status QUARANTINED = %q, want 0", got)
		}

		// A row released by key is tried again on the next sweep (and counted held again).
		e.exec(fmt.Sprintf("INSERT INTO %saudit_log (id, occurred_at, state) VALUES (9, %d, 'done')", p, old))
		e.exec("INSERT INTO " + p + "invoice (id, audit_log_id) VALUES (2, 9)")
		retention(t, "sweep", "--config", path)
		for _, bad := range [][]string{{"release"}, {"release", "--all", "9"}, {"release", "[9"}} {
			if r := retention(t, append([]string{"quarantine", "--config", path}, bad...)...); r.code != 2 {
				t.Fatalf("quarantine %v: exit %d, want 2: %s", bad, r.code, r.stderr)
			}
		}
		rel := retention(t, "quarantine", "release", "--config", path, "--pass", "audit-log", "9")
		if rel.code != 0 || !strings.Contains(rel.stdout, "released 1 row; the next sweep tries it again") {
			t.Fatalf("release: exit %d: %s%s", rel.code, rel.stdout, rel.stderr)
		}
		again := retention(t, "sweep", "--config", path)
		if !strings.Contains(again.stderr, `level=warning msg="rows held in place`) || statusQuarantined(t, path) != "1" {
			t.Fatalf("the released row was not tried again:\n%s", again.stderr)
		}
	})
}

// statusQuarantined returns the QUARANTINED column of the audit-log line of `status`.
func statusQuarantined(t *testing.T, path string) string {
	t.Helper()
	r := retention(t, "status", "--config", path)
	lines := strings.Split(r.stdout, "\n")
	if r.code != 0 || len(lines) < 2 {
		t.Fatalf("status: exit %d: %s%s", r.code, r.stdout, r.stderr)
	}
	col := strings.Index(lines[0], "QUARANTINED")
	for _, line := range lines[1:] {
		if strings.HasPrefix(line, "audit-log") && col >= 0 && col < len(line) {
			return strings.Fields(line[col:])[0]
		}
	}
	t.Fatalf("status has no QUARANTINED value for audit-log:\n%s", r.stdout)
	return ""
}
