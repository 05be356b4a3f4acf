package config

import (
	"strings"
	"testing"
	"time"

	"github.com/retentionkit/retention/passes"
)

// A partitions section's problems name the pass, the field and its line, like every
// other field's.
func TestPartitionsMessages(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body string
		want       []string
	}{
		{"unknown mode", passHead + "    partitions:\n      mode: truncate\n",
			[]string{"line 10: pass \"a\": partitions.mode must be \"drop\", \"detach\" or \"archive\", got `truncate`"}},
		{"archive without a schema", passHead + "    partitions:\n      mode: archive\n",
			[]string{`line 9: pass "a": partitions.archive_schema is required with mode: archive`}},
		{"schema without archive", passHead + "    partitions:\n      archive_schema: old\n",
			[]string{`line 10: pass "a": partitions.archive_schema applies to mode: archive only, not drop`}},
		{"archive schema not an identifier", passHead + "    partitions:\n      mode: archive\n      archive_schema: \"old; drop\"\n",
			[]string{`line 11: pass "a": partitions.archive_schema is not a plain identifier`}},
		{"negative lock timeout", passHead + "    partitions:\n      lock_timeout: -1s\n",
			[]string{`line 10: pass "a": partitions.lock_timeout must not be negative, got -1s (0 means 1s)`}},
		{"lock timeout under 1ms", passHead + "    partitions:\n      lock_timeout: 500us\n",
			[]string{`line 10: pass "a": partitions.lock_timeout must be at least 1ms`}},
		{"unknown field", passHead + "    partitions:\n      mdoe: drop\n",
			[]string{`line 10: pass "a": partitions: unknown field "mdoe"`}},
		{"concurrently not a boolean", passHead + "    partitions:\n      concurrently: maybe\n",
			[]string{`line 10: pass "a": partitions.concurrently`}},
		{"with a filter", passHead + "    filter: {column: s, in: [done]}\n    partitions: {mode: drop}\n",
			[]string{`line 10: pass "a": partitions cannot be used with filter: a retired partition would take rows the pass must keep`}},
		{"with a where", passHead + "    where: tenant <> 1\n    partitions: {mode: drop}\n",
			[]string{`line 10: pass "a": partitions cannot be used with where`}},
		{"with a block child", passHead + "    partitions: {}\n    children:\n      - {table: c, foreign_key: a_id, on_delete: block}\n",
			[]string{`line 9: pass "a": partitions cannot be used with a block child (children[0], c)`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			msg := loadErrors(t, tc.body)
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not say %q", msg, w)
				}
			}
		})
	}
}

// A good section reaches the pass's spec with its defaults: drop, concurrently, 1s.
func TestPartitionsBuild(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, section string
		want          passes.PartitionSpec
		concurrently  bool
	}{
		{"defaults", "    partitions: {}\n", passes.PartitionSpec{}, true},
		{"archive", "    partitions:\n      mode: archive\n      archive_schema: old\n      concurrently: false\n      lock_timeout: 250ms\n      allow_publication: true\n",
			passes.PartitionSpec{Mode: passes.PartitionArchive, ArchiveSchema: "old", LockTimeout: 250 * time.Millisecond, AllowPublication: true}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := parseConfig([]byte(passHead+tc.section), envOf(nil))
			if err == nil {
				err = c.Validate()
			}
			if err != nil {
				t.Fatal(err)
			}
			built, err := c.TablePasses()
			if err != nil {
				t.Fatal(err)
			}
			got := built[0].Spec.Partitions
			if got == nil {
				t.Fatal("the spec has no partitions")
			}
			conc := got.Concurrently == nil || *got.Concurrently
			got.Concurrently = nil
			if *got != tc.want || conc != tc.concurrently {
				t.Fatalf("built %+v (concurrently %v), want %+v (concurrently %v)", *got, conc, tc.want, tc.concurrently)
			}
		})
	}
}
