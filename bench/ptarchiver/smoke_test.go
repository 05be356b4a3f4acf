package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestHarnessSmoke runs the benchmark's harness on a small table: a table pass, paced
// by a batch_delay and by pacing: adaptive (whose clock runs, so its cutoff must still
// split the rows as the shape's does), and pt-archiver --bulk-delete, one run each, and
// holds them all to the keep-set check. It is
// the harness's test, not a measurement (make bench runs that). It needs TEST_MYSQL_URL
// (a user that may create rt_mysql_* databases) and pt-archiver on the PATH.
func TestHarnessSmoke(t *testing.T) {
	dsn := os.Getenv("TEST_MYSQL_URL")
	if dsn == "" {
		t.Skip("TEST_MYSQL_URL not set: no MariaDB/MySQL to run the pt-archiver benchmark's harness on")
	}
	if _, err := exec.LookPath("pt-archiver"); err != nil {
		t.Skip("pt-archiver not installed (Debian's percona-toolkit): the benchmark's harness has nothing to compare with")
	}
	suffix := make([]byte, 4)
	_, _ = rand.Read(suffix)
	c := config{
		dsn: dsn, db: "rt_mysql_ptsmoke_" + hex.EncodeToString(suffix),
		rows: 4000, reps: 1, rate: 50, workers: 2,
		idle: 300 * time.Millisecond, settle: 200 * time.Millisecond, window: 2 * time.Second,
		only: "batch 500$,batch_delay 10ms,adaptive,bulk-delete", ptArchiver: "pt-archiver",
	}
	// Five minutes: the adaptive variant holds back 2 s for its baseline and may sit at
	// its floor (200 rows/s) on a machine busy with the rest of make test.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	report, err := run(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| retention table pass, batch 500 |",
		"| retention table pass, batch 500, batch_delay 10ms |",
		"| retention table pass, batch 500, pacing: adaptive |",
		"| pt-archiver --purge --bulk-delete --limit 500 |",
	} {
		line := lineWith(report, want)
		if line == "" {
			t.Fatalf("no row %q in the report:\n%s", want, report)
		}
		if !strings.Contains(line, "exact in 1 of 1") || !strings.Contains(line, "expired left 0") {
			t.Errorf("keep-set not exact on a finished run:\n%s", line)
		}
	}
	// The server table: one line a variant, idle → during, for each counter.
	if !strings.Contains(report, "What the host and the server did") {
		t.Errorf("no server table in the report:\n%s", report)
	}
	arrows := 0
	for _, l := range strings.Split(report, "\n") {
		if strings.HasPrefix(l, "| pt-archiver --purge --bulk-delete --limit 500 |") {
			arrows += strings.Count(l, "→")
		}
	}
	if arrows != 4 {
		t.Errorf("%d arrows on pt-archiver --bulk-delete's lines, want idle → during for 4 counters:\n%s", arrows, report)
	}
	// Every table pass says how its batches went (the adaptive one, why it was slow).
	for _, want := range []string{
		"- retention table pass, batch 500, run 1: ",
		"- retention table pass, batch 500, pacing: adaptive, run 1: ",
	} {
		if line := lineWith(report, want); !strings.Contains(line, " batches, median ") {
			t.Errorf("no trace of the batches for %q in the report:\n%s", want, report)
		}
	}
}

func lineWith(s, prefix string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}
