package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), service{out: &out, dbPath: filepath.Join(t.TempDir(), "service.db"), once: true}); err != nil {
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

// TestServesRetentionOnTheServicesServer reads /metrics and /readyz from the service's
// own server once both passes swept: the metrics come from the service's registry (the
// rows the sweeps deleted, the held-rows gauges of the table pass, the build info) and
// the admin handler answers under the prefix the service mounted it at.
func TestServesRetentionOnTheServicesServer(t *testing.T) {
	var out bytes.Buffer
	get := func(addr, path string) (int, string, error) {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), err
	}
	var metrics, ready, page, dashboard string
	var readyCode int
	inspect := func(addr string) error {
		var err error
		if _, metrics, err = get(addr, "/metrics"); err != nil {
			return err
		}
		if readyCode, ready, err = get(addr, "/retention/readyz"); err != nil {
			return err
		}
		if _, dashboard, err = get(addr, "/retention/ui/"); err != nil {
			return err
		}
		_, page, err = get(addr, "/")
		return err
	}
	if err := run(context.Background(), service{out: &out, dbPath: filepath.Join(t.TempDir(), "service.db"), once: true, inspect: inspect}); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{
		`retention_rows_deleted_total{pass="outbox"} 857`,
		`retention_rows_deleted_total{pass="github.com/retentionkit/retention/examples/embedded.cache"} 180`,
		`retention_sweeps_total{pass="outbox",reason="drained"} 1`,
		`retention_failures_total{pass="outbox"} 0`,
		`retention_backlog_rows{pass="outbox"} 0`,
		`retention_held_rows{pass="outbox"} 0`,
		`retention_oldest_deletable_age_seconds{pass="outbox"} 0`,
		`retention_build_info{`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %q:\n%.3000s", want, metrics)
		}
	}
	var body struct{ Status string }
	if err := json.Unmarshal([]byte(ready), &body); err != nil || readyCode != http.StatusOK || body.Status != "ready" {
		t.Errorf("/retention/readyz = %d %q (%v)", readyCode, ready, err)
	}
	if !strings.Contains(dashboard, `href="/retention/ui/passes/outbox"`) {
		t.Errorf("the dashboard under /retention/ui/ does not link the outbox pass:\n%.2000s", dashboard)
	}
	if !strings.Contains(page, "the service's own page") {
		t.Errorf("the service's own route answers %q", page)
	}
}
