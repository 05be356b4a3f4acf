package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRun runs the demo on a small table and checks what it reports.
func TestRun(t *testing.T) {
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := run(ctx, &out, filepath.Join(t.TempDir(), "demo.db"), 2000); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	// 2,000 rows over 300 days: the oldest 1,800 are expired, 18 of them on legal hold.
	for _, want := range []string{"dry run: 1782 rows would go, 18 are kept by a legal hold", "sweep done",
		"swept: 1782 rows deleted in 2 batches", "left: 218 audit rows, 38 attachments, 20 legal holds"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
