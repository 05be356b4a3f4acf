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
	tests := []struct {
		name, body string
		want       []string
	}{
		{"statement timeout under 1ms", passHead + "    statement_timeout: 500us\n",
			[]string{`line 9: pass "a": statement_timeout must be 0 (no timeout) or at least 1ms, got 500µs`}},
		{"fractional batch size", passHead + "    batch_size: 1.5\n", []string{`line 9: pass "a": batch_size: want a whole number, got "1.5"`}},
		{"fraction under one", passHead + "    batch_size: 0.5\n", []string{`line 9: pass "a": batch_size: want a whole number, got "0.5"`}},
		{"fractional max batches", passHead + "    max_batches_per_sweep: 2.25\n", []string{`line 9: pass "a": max_batches_per_sweep: want a whole number, got "2.25"`}},
		{"fractional cleanup batch", goodHead + "metadata_cleanup:\n  delete_batch_size: 0.5\n",
			[]string{`line 5: metadata_cleanup.delete_batch_size: want a whole number, got "0.5"`}},
		{"fractional concurrency", goodHead + "node:\n  max_concurrent_deletes: 1.5\n",
			[]string{`line 5: node.max_concurrent_deletes: want a whole number, got "1.5"`}},
		{"fractional readiness", goodHead + "node:\n  ready_after_failures: 2.5\n",
			[]string{`line 5: node.ready_after_failures: want a whole number, got "2.5"`}},
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
