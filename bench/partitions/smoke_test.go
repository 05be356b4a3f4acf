package main

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

// TestHarnessSmoke runs the benchmark's harness on a tiny fixture (4 daily partitions
// of 2,000 rows), every variant at both cutoffs, and fails if a table pass, with or
// without partitions:, leaves a keep-set other than the SQL reference, or if pg_partman
// (whole partitions only) does anything but leave the half partition below the
// mid-partition cutoff. It is the harness's test, not a measurement (make bench runs
// that). It needs TEST_DATABASE_URL; the pg_partman rows run only where the extension
// is installed in that database (the test does not install it).
func TestHarnessSmoke(t *testing.T) {
	dsn := os.Getenv("TEST_DATABASE_URL")
	if dsn == "" {
		t.Skip("TEST_DATABASE_URL not set: no PostgreSQL to run the partitions benchmark's harness on")
	}
	c := config{dsn: dsn, sizes: []size{{parts: 4, rows: 2000}}, batch: 500, rate: 40, workers: 2, lockTimeout: time.Second}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	results, err := measure(ctx, c, testWriter{t})
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 6 {
		t.Fatalf("%d results, want 3 variants × 2 cutoffs", len(results))
	}
	for _, r := range results {
		switch {
		case r.skipped != "":
			t.Logf("%s, %s: %s", r.cut, r.variant, r.skipped)
		case strings.HasPrefix(r.variant, "pg_partman") && r.cut == "mid-partition":
			if r.left != 1000 || r.extra != 1000 || r.missing != 0 {
				t.Errorf("pg_partman mid-partition: %d eligible left, keep-set %d/%d; want the 1000 rows below the cutoff in the partition it falls in, and nothing kept lost", r.left, r.extra, r.missing)
			}
		default:
			if r.left != 0 || r.extra != 0 || r.missing != 0 {
				t.Errorf("%s, %s: %d eligible left, %d expired rows left, %d kept rows lost; want an exact keep-set", r.cut, r.variant, r.left, r.extra, r.missing)
			}
		}
	}
	if rep := report(c, results); !strings.Contains(rep, "| 4 partitions of 2000 rows | on a boundary | table pass with partitions: (drop, concurrently) |") {
		t.Errorf("report lacks the partitions row:\n%s", rep)
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}
