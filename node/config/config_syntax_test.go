package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// loadFile writes body to a file and loads it as the node does, returning the file's
// path and the error's lines.
func loadFile(t *testing.T, body string) (string, []string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "retention.yaml")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := LoadConfig(path)
	if err == nil {
		err = c.Validate()
	}
	if err == nil {
		t.Fatalf("accepted:\n%s", body)
	}
	return path, strings.Split(err.Error(), "\n")
}

// A YAML syntax error names the line where the file stops reading as YAML (the parser
// itself reports where the construct began, often counted from 0), after the
// documented "config FILE: line N: " prefix.
func TestSyntaxErrorsPointAtTheirLine(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body string
		want       string // after "config FILE: "
	}{
		{"unclosed flow list", passHead + "    children: [a\n    retention_period: 1d\n",
			"line 9: bad YAML: did not find expected ',' or ']'"},
		{"key indented short", passHead + "   retention_period: 1d\n",
			"line 9: bad YAML: did not find expected '-' indicator"},
		{"tab in the indentation", passHead + "\tretention_period: 1d\n",
			"line 9: bad YAML: found a tab character that violates indentation"},
		{"value holding ': '", goodHead + "node:\n  admin: a: b\n",
			"line 5: bad YAML: mapping values are not allowed in this context"},
		{"a token that starts nothing", passHead + "    where: @x\n",
			"line 9: bad YAML: found character that cannot start any token"},
		{"unclosed quote: the line it opens on", goodHead + "node:\n  admin: \"127.0.0.1:9464\n  shutdown_grace: 1s\n",
			"line 5: bad YAML: found unexpected end of stream"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path, lines := loadFile(t, tc.body)
			if want := "config " + path + ": " + tc.want; len(lines) != 1 || lines[0] != want {
				t.Fatalf("got:\n%s\nwant:\n%s", strings.Join(lines, "\n"), want)
			}
		})
	}
}

// Every line of a read error (kinds, unknown fields) carries the file and its own line,
// in the order of the file.
func TestReadErrorsEachLeadWithFileAndLine(t *testing.T) {
	t.Parallel()
	body := "ledger:\n" + // 1
		"  enabled: maybe\n" + // 2
		"passes:\n" + // 3
		"  - name: a\n" + // 4
		"    batch_size: lots\n" + // 5
		"    bogus: 1\n" + // 6
		"database:\n" + // 7
		"  driver: postgres\n" + // 8
		"  dsn: postgres://app@127.0.0.1/app\n" + // 9
		"node:\n" + // 10
		"  max_concurrent_deletes: two\n" // 11
	path, lines := loadFile(t, body)
	want := []string{
		`line 2: ledger.enabled: want true or false, got "maybe"`,
		`line 5: pass "a": batch_size: want a whole number, got "lots"`,
		`line 6: pass "a": unknown field "bogus"`,
		`line 11: node.max_concurrent_deletes: want a whole number, got "two"`,
	}
	if len(lines) != len(want) {
		t.Fatalf("got %d lines, want %d:\n%s", len(lines), len(want), strings.Join(lines, "\n"))
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], "config "+path+": "+w) {
			t.Errorf("line %d of the error:\n%s\nwant it to start with:\nconfig %s: %s", i+1, lines[i], path, w)
		}
	}
}

// Validation errors come out in the order of the file's lines, whatever order the
// checks run in (database first, then node, passes, ledger, metadata_cleanup).
func TestValidationErrorsSortedByLine(t *testing.T) {
	t.Parallel()
	body := "metadata_cleanup:\n" + // 1
		"  names:\n" + // 2
		"    - { name: \"\" }\n" + // 3
		"ledger:\n" + // 4
		"  table_prefix: \"bad prefix\"\n" + // 5
		"passes:\n" + // 6
		"  - name: a\n" + // 7
		"    table: a\n" + // 8
		"    key: id\n" + // 9
		"    timestamp: ts\n" + // 10
		"    batch_size: 0\n" + // 11
		"node:\n" + // 12
		"  max_concurrent_deletes: -1\n" + // 13
		"database:\n" + // 14
		"  driver: oracle\n" + // 15
		"  dsn: app.db\n" // 16
	_, lines := loadFile(t, body)
	var got []int
	for _, l := range lines {
		var n int
		if _, err := fmt.Sscanf(l, "line %d:", &n); err != nil {
			t.Fatalf("an error line without its line: %q", l)
		}
		got = append(got, n)
	}
	want := []int{3, 5, 11, 13, 15}
	if len(got) != len(want) {
		t.Fatalf("lines %v, want %v:\n%s", got, want, strings.Join(lines, "\n"))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("lines %v, want %v:\n%s", got, want, strings.Join(lines, "\n"))
		}
	}
}
