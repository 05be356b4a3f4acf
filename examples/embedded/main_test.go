package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), &out, filepath.Join(t.TempDir(), "service.db")); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	// 300 entries one minute apart, 2h retention: 180 go; 1,000 rows ten minutes apart,
	// 24h retention: 857 go (rows 144..1000; row 144 is exactly 24h old when seeded, so past
	// the cutoff the runtime takes a moment later).
	for _, want := range []string{"deleted 180 in 4 batches", "outbox: deleted 857", "left: 120 cache entries, 143 outbox rows", "still running: true"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
