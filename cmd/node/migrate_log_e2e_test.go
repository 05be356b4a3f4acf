package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// ledgerLines returns the log lines of stderr that report a ledger migration.
func ledgerLines(t *testing.T, stderr string) []map[string]any {
	t.Helper()
	var found []map[string]any
	for _, line := range strings.Split(stderr, "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) != nil {
			continue
		}
		if msg, _ := m["msg"].(string); strings.Contains(msg, "ledger tables") {
			found = append(found, m)
		}
	}
	return found
}

// TestCreatingTheLedgerSaysSoInOneLine: the sweep that creates the ledger in a user's
// database logs one line naming every table it created; the next sweep logs none.
func TestCreatingTheLedgerSaysSoInOneLine(t *testing.T) {
	t.Parallel()
	eachDriver(t, func(t *testing.T, e *env) {
		e.seed(20)
		path := e.config("", "")
		first := retention(t, "sweep", "--config", path, "--log-format", "json")
		lines := ledgerLines(t, first.stderr)
		if first.code != 0 || len(lines) != 1 || lines[0]["msg"] != "created the ledger tables in the database" {
			t.Fatalf("first sweep: exit %d, %d ledger lines, want one saying it created them:\n%s", first.code, len(lines), first.stderr)
		}
		named, _ := lines[0]["tables"].(string)
		tables := strings.Fields(named)
		for _, want := range []string{"metadata", "log", "work_queue", "dead_letter", "settings", "node", "migrations", "migration_locks"} {
			if !strings.Contains(" "+strings.Join(tables, " ")+" ", " "+e.prefix+want+" ") {
				t.Errorf("tables %v: no %s%s", tables, e.prefix, want)
			}
		}
		for _, table := range tables {
			if strings.HasSuffix(table, "audit_log") || strings.HasSuffix(table, "legal_hold") {
				t.Errorf("the user's own table %s is named as created", table)
			}
		}
		again := retention(t, "sweep", "--config", path, "--log-format", "json")
		if lines := ledgerLines(t, again.stderr); again.code != 0 || len(lines) != 0 {
			t.Fatalf("second sweep: exit %d, ledger lines %v; want none", again.code, lines)
		}
	})
}
