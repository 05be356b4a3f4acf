package config

import (
	"strings"
	"testing"
)

// passHead is a file with one good pass named "a" (lines 4-8), to which a case appends
// fields (line 9 on) or further passes.
const passHead = goodHead + `passes:
  - name: a
    table: a
    key: id
    timestamp: ts
`

// loadErrors is what a user sees from a file: the read error, or else Validate's.
func loadErrors(t *testing.T, body string) string {
	t.Helper()
	c, err := parseConfig([]byte(body), envOf(nil))
	if err == nil {
		err = c.Validate()
	}
	if err == nil {
		t.Fatalf("accepted:\n%s", body)
	}
	return err.Error()
}

// Each message names the pass (or section), the field and the line, and no Go type or
// decoder text.
func TestMessagesNamePassFieldAndLine(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body string
		want       []string
	}{
		{"statement timeout under 1ms", passHead + "    statement_timeout: 500us\n",
			[]string{`line 9: pass "a": statement_timeout must be 0 (no timeout) or at least 1ms, got 500µs`}},
		{"analyze_after_share negative", passHead + "    analyze_after_share: -0.5\n",
			[]string{`line 9: pass "a": analyze_after_share must be between 0 (never) and 1, got -0.5`}},
		{"analyze_after_share over 1", passHead + "    analyze_after_share: 2\n",
			[]string{`line 9: pass "a": analyze_after_share must be at most 1 (a share of the table's rows), got 2`}},
		{"vacuum_timeout negative", passHead + "    vacuum_timeout: -1s\n",
			[]string{`line 9: pass "a": vacuum_timeout must not be negative, got -1s`}},
		{"synchronous_commit unknown", passHead + "    synchronous_commit: sometimes\n",
			[]string{"line 9: pass \"a\": synchronous_commit must be one of off, local, remote_write, on, remote_apply, got `sometimes`"}},
		{"fractional batch size", passHead + "    batch_size: 1.5\n", []string{`line 9: pass "a": batch_size: want a whole number, got "1.5"`}},
		{"fraction under one", passHead + "    batch_size: 0.5\n", []string{`line 9: pass "a": batch_size: want a whole number, got "0.5"`}},
		{"fractional max batches", passHead + "    max_batches_per_sweep: 2.25\n", []string{`line 9: pass "a": max_batches_per_sweep: want a whole number, got "2.25"`}},
		{"fractional cleanup batch", goodHead + "metadata_cleanup:\n  delete_batch_size: 0.5\n",
			[]string{`line 5: metadata_cleanup.delete_batch_size: want a whole number, got "0.5"`}},
		{"fractional concurrency", goodHead + "node:\n  max_concurrent_deletes: 1.5\n",
			[]string{`line 5: node.max_concurrent_deletes: want a whole number, got "1.5"`}},
		{"fractional readiness", goodHead + "node:\n  ready_after_failures: 2.5\n",
			[]string{`line 5: node.ready_after_failures: want a whole number, got "2.5"`}},
		{"field missing from a second pass", passHead + "  - name: b\n    table: b\n    timestamp: ts\n",
			[]string{`line 9: pass "b": key is empty`}},
		{"pass without a name", passHead + "  - name: b\n    table: b\n    key: id\n    timestamp: ts\n  - table: c\n    key: id\n    timestamp: ts\n",
			[]string{`line 13: passes[2]: name must not be empty`}},
		{"child without a foreign key", passHead + "    children:\n      - table: c\n      - table: d\n        on_delete: delete\n",
			[]string{`line 10: pass "a": children[0].foreign_key is empty`, `line 11: pass "a": children[1].foreign_key is empty`}},
		{"cleanup name left empty", goodHead + "metadata_cleanup:\n  names:\n    - name: x\n    - retention_period: 1d\n",
			[]string{`line 7: metadata_cleanup.names[1].name is empty`}},
		{"cleanup name retention not positive", goodHead + "metadata_cleanup:\n  names:\n    - name: x\n    - name: y\n      retention_period: 0s\n",
			[]string{`line 8: metadata_cleanup.names[1].retention_period must be positive, got 0s`}},
		{"cleanup retention negative", goodHead + "metadata_cleanup:\n  enabled: true\n  retention_period: -1d\n",
			[]string{`line 6: metadata_cleanup.retention_period must be positive, got -24h0m0s`}},
		{"cleanup interval negative", goodHead + "metadata_cleanup:\n  cleanup_interval: -1h\n",
			[]string{`line 5: metadata_cleanup.cleanup_interval must be positive, got -1h0m0s`}},
		{"key given a mapping", passHead + "    children:\n      - table: c\n        foreign_key: {x: y}\n",
			[]string{`line 11: pass "a": children[0].foreign_key: want a column name or a list of column names, got a mapping`}},
		{"key given a nested list", passHead[:len(passHead)-len("    key: id\n    timestamp: ts\n")] + "    key: [[a]]\n    timestamp: ts\n",
			[]string{`line 7: pass "a": key: want a column name or a list of column names, got a list holding a list`}},
		{"key given a list holding a mapping", passHead + "    children:\n      - table: c\n        foreign_key: a_id\n        key: [id, {x: 1}]\n",
			[]string{`line 12: pass "a": children[0].key: want a column name or a list of column names, got a list holding a mapping`}},
		{"field given twice", passHead + "    retention_period: 1d\n    retention_period: 2d\n",
			[]string{`line 10: pass "a": retention_period is given twice (first at line 9)`}},
		{"section field given twice", goodHead + "  driver: sqlite\n", []string{`line 4: database: driver is given twice (first at line 2)`}},
		{"filter value a list or a mapping", passHead + "    filter: {column: s, in: [done, [a], {b: c}]}\n",
			[]string{`line 9: pass "a": filter.in[1] must be a single value (text, number, true/false or null), got a list`,
				`line 9: pass "a": filter.in[2] must be a single value (text, number, true/false or null), got a mapping`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			msg := loadErrors(t, tc.body)
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not say %q", msg, w)
				}
			}
			for _, never := range []string{"main.", "interface {}", "decode:", "!!", "unmarshal", `pass ""`} {
				if strings.Contains(msg, never) {
					t.Errorf("error %q holds %q", msg, never)
				}
			}
		})
	}
}
