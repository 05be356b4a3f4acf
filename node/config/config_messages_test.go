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
