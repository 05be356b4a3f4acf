package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/retentionkit/retention/passes"
)

// TestDrainUnderAdaptivePacingIsOneSweep: `sweep --drain` of an adaptive pass bounded
// to 2 x 50 rows per sweep clears the backlog in one unbounded sweep, logs its pacing
// summary, and status shows the pass as adaptive within its bounds.
func TestDrainUnderAdaptivePacingIsOneSweep(t *testing.T) {
	t.Parallel()
	e := newEnv(t, passes.DriverSQLite)
	e.seed(3000)
	cfg := e.config("    pacing: adaptive\n    max_batches_per_sweep: 2\n", "")
	r := retention(t, "sweep", "--config", cfg, "--drain", "--progress", "never")
	if r.code != 0 {
		t.Fatalf("sweep --drain: exit %d: %s", r.code, r.stderr)
	}
	cutoff := time.Now().Add(-30 * 24 * time.Hour).Unix()
	if left := e.count(fmt.Sprintf("occurred_at < %d AND state = 'done' AND id NOT IN (SELECT audit_log_id FROM %slegal_hold)", cutoff, e.prefix)); left != 0 {
		t.Fatalf("%d expired rows left", left)
	}
	var row []string
	for _, line := range strings.Split(r.stdout, "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == "audit-log" {
			row = f
		}
	}
	if len(row) < 5 || row[4] != "1" {
		t.Errorf("summary row %q: want the drain done in 1 sweep\n%s", row, r.stdout)
	}
	if !strings.Contains(r.stderr, "pacing: batches") {
		t.Errorf("no pacing summary line in the log:\n%s", r.stderr)
	}
	st := retention(t, "status", "--config", cfg)
	if st.code != 0 || !strings.Contains(st.stdout, "PACING") {
		t.Fatalf("status: exit %d\n%s%s", st.code, st.stdout, st.stderr)
	}
	found := false
	for _, line := range strings.Split(st.stdout, "\n") {
		if f := strings.Fields(line); len(f) == 4 && f[0] == "adaptive" && f[1] == "audit-log" && f[2] == "<=50" {
			found = true
		}
	}
	if !found {
		t.Errorf("status shows no adaptive pacing for audit-log:\n%s", st.stdout)
	}
}
