package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRun runs the example end to end: the admission limit held and the backlog drained.
func TestRun(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.txt")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := run(context.Background(), f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	b, _ := os.ReadFile(path)
	out := string(b)
	var peak int
	if _, err := fmt.Sscanf(out[strings.Index(out, "peak"):], "peak concurrent deletes: %d", &peak); err != nil || peak < 1 || peak > 2 {
		t.Errorf("peak concurrent deletes = %d (%v), want 1 or 2", peak, err)
	}
	for _, want := range []string{"(limit 2); keys still tracked: 0; slots free: 2/2", "250 left", "0 left", "loop stopping"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
