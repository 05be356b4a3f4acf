package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/ledger"
)

// TestStatusNamesTheLiveNodesAndTriggerWarnsWithoutOne walks status and trigger through a
// ledger with only a node long gone, then with a running node: status says no node is
// alive (naming the last one), trigger warns that nobody will claim its sweep; once a node
// runs, status lists it and trigger stays quiet. Times print in RFC 3339 in the local
// zone, here one with a half-hour offset.
func TestStatusNamesTheLiveNodesAndTriggerWarnsWithoutOne(t *testing.T) {
	t.Parallel()
	eachDriver(t, func(t *testing.T, e *env) {
		e.seed(100)
		path := e.config("    sweep_interval: 24h", "")
		if r := retention(t, "migrate", "--config", path); r.code != 0 {
			t.Fatalf("migrate: exit %d: %s", r.code, r.stderr)
		}
		l, err := ledger.New(e.db, e.prefix)
		if err != nil {
			t.Fatal(err)
		}
		gone := ledger.NewNode(time.Now().Add(-time.Hour))
		if err := l.Heartbeat(context.Background(), gone, time.Now().Add(-2*ledger.DefaultStaleAfter)); err != nil {
			t.Fatal(err)
		}
		kolkata := []string{"TZ=Asia/Kolkata"}

		r := retentionEnv(t, kolkata, "status", "--config", path)
		if r.code != 0 || !strings.Contains(r.stdout, "no node is alive") || !strings.Contains(r.stdout, gone.ID) {
			t.Fatalf("status with only a stale node: exit %d:\n%s%s", r.code, r.stdout, r.stderr)
		}
		if line := healthLine(r.stdout); !strings.HasPrefix(line, "health: ready (from the ledger") {
			t.Fatalf("status with no node running: health line %q, want ready judged from the ledger", line)
		}
		r = retention(t, "trigger", "--config", path, "audit-log")
		if r.code != 0 || !strings.Contains(r.stderr, "no live node will claim the queued sweep") {
			t.Fatalf("trigger with no live node: exit %d, stderr:\n%s", r.code, r.stderr)
		}

		n := startRun(t, path)
		joined := n.waitLog(t, "node joined the ledger", "")
		n.waitLog(t, "sweep done", "audit-log")
		// The ledger observer records the finished run just after the log line: ask
		// again (each ask is a whole process, a bounded number of times) until it has.
		for range 200 {
			if r = retentionEnv(t, kolkata, "status", "--config", path); !strings.Contains(r.stdout, "InProgress") {
				break
			}
		}
		if r.code != 0 || strings.Contains(r.stdout, "no node is alive") || !strings.Contains(r.stdout, joined["node"].(string)) {
			t.Fatalf("status with a running node %v: exit %d:\n%s%s", joined["node"], r.code, r.stdout, r.stderr)
		}
		requireRFC3339InKolkata(t, r.stdout)
		r = retention(t, "trigger", "--config", path, "audit-log")
		if r.code != 0 || strings.Contains(r.stderr, "no live node") {
			t.Fatalf("trigger with a live node: exit %d, stderr:\n%s", r.code, r.stderr)
		}
	})
}

// requireRFC3339InKolkata checks the pass row's last run and next sweep, and the live
// node's times, parse as RFC 3339 with the +05:30 offset.
func requireRFC3339InKolkata(t *testing.T, out string) {
	t.Helper()
	var stamps []string
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) >= 10 && f[0] == "audit-log":
			stamps = append(stamps, f[4], f[len(f)-1]) // LAST RUN (after PASS, BACKLOG, HELD, QUARANTINED), NEXT SWEEP
		case len(f) == 5 && f[0] != "NODE":
			stamps = append(stamps, f[3], f[4]) // STARTED, LAST HEARTBEAT
		}
	}
	if len(stamps) != 4 {
		t.Fatalf("found %d of the 4 times in:\n%s", len(stamps), out)
	}
	for _, s := range stamps {
		at, err := time.Parse(time.RFC3339, s)
		if _, offset := at.Zone(); err != nil || offset != 5*3600+1800 {
			t.Errorf("%q is not RFC 3339 at +05:30 (%v) in:\n%s", s, err, out)
		}
	}
}

// TestJSONLogsOfTheNodeGiveDurationsInSeconds reads a sweep's JSON log line: its
// duration is a number of seconds, not of nanoseconds.
func TestJSONLogsOfTheNodeGiveDurationsInSeconds(t *testing.T) {
	t.Parallel()
	e := newEnv(t, passes.DriverSQLite)
	e.seed(200)
	r := retention(t, "sweep", "--config", e.config("", ""), "--log-format", "json", "--progress", "never")
	if r.code != 0 {
		t.Fatalf("sweep: exit %d: %s", r.code, r.stderr)
	}
	for _, line := range strings.Split(r.stderr, "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) != nil || m["msg"] != "sweep done" {
			continue
		}
		// A sweep of 200 rows takes well under a minute, and more than a nanosecond.
		if d, ok := m["duration"].(float64); !ok || d <= 0 || d >= 60 {
			t.Fatalf("duration %v is not a number of seconds: %s", m["duration"], line)
		}
		return
	}
	t.Fatalf("no sweep done line in:\n%s", r.stderr)
}
