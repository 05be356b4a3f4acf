package config

import (
	"strings"
	"testing"
)

// node.ready_after_failures: 3 when left out, the file's value otherwise, and below 1
// refused naming the field and its line.
func TestReadyAfterFailures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		node    string
		want    int
		wantErr string
	}{
		{"", DefaultReadyAfterFailures, ""},
		{"node:\n  ready_after_failures: 1\n", 1, ""},
		{"node:\n  ready_after_failures: 10\n", 10, ""},
		{"node:\n  ready_after_failures: 0\n", 0, "node.ready_after_failures: must be at least 1, got 0"},
		{"node:\n  ready_after_failures: -2\n", -2, "node.ready_after_failures: must be at least 1, got -2"},
	}
	for _, tt := range tests {
		c, err := parseConfig([]byte("database:\n  driver: sqlite\n  dsn: x.db\n"+tt.node), envOf(nil))
		if err != nil {
			t.Fatalf("%q: %v", tt.node, err)
		}
		if got := c.ReadyAfterFailures(); got != tt.want {
			t.Errorf("%q: ReadyAfterFailures() = %d, want %d", tt.node, got, tt.want)
		}
		err = c.Validate()
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("%q: Validate() = %v", tt.node, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), "line 5: "+tt.wantErr)):
			t.Errorf("%q: Validate() = %v, want line 5: %s", tt.node, err, tt.wantErr)
		}
	}
}
