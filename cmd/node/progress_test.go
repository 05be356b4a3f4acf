package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/retentionkit/retention/actors"
)

// TestTheFinalBarReachesTheRowsDeleted feeds a bar batches that add up to more, or fewer,
// rows than its dry-run estimate: the last frame shows what was deleted, out of as many.
func TestTheFinalBarReachesTheRowsDeleted(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		estimate int64
		batches  []int
		want     string
	}{
		{"more than the estimate", 10, []int{6, 9}, "15 / 15 rows"},
		{"exactly the estimate", 10, []int{5, 5}, "10 / 10 rows"},
		{"fewer than the estimate", 10, []int{4}, "4 / 4 rows"},
		{"none", 0, nil, "0 / 0 rows"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			b := newBars(context.Background(), &out, false)
			b.add("p", tc.estimate)
			for i, rows := range tc.batches {
				b.batch(actors.BatchDone{Name: "p", Batch: i + 1, Rows: rows})
			}
			b.passDone("p")
			b.wait()
			frames := strings.Split(strings.TrimSpace(out.String()), "\n")
			if last := frames[len(frames)-1]; !strings.Contains(last, tc.want) {
				t.Fatalf("last frame %q, want %q; all:\n%s", last, tc.want, out.String())
			}
		})
	}
}
