// End-to-end tests of `validate`: bad configurations, a locked table, a password that never shows.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/retentionkit/retention/passes"
)

func TestValidateRefusesBadConfigs(t *testing.T) {
	t.Parallel()
	e := newEnv(t, passes.DriverSQLite)
	tests := []struct {
		name, passExtra, top, want string
	}{
		{"unknown field", "    batch_sise: 10", "", "batch_sise"},
		{"negative duration", "    batch_delay: -1s", "", `pass "audit-log": batch_delay`},
		{"zero batch size", "  - { name: zero, table: t, key: id, timestamp: ts, retention_period: 1d, batch_size: 0 }", "", `pass "zero": batch_size`},
		{"bad identifier", "  - { name: evil, table: \"x; DROP TABLE y\", key: id, timestamp: ts, retention_period: 1d }", "", `pass "evil": table`},
		{"duplicate pass names", "  - { name: audit-log, table: other, key: id, timestamp: ts, retention_period: 1d }", "", `pass "audit-log": name is already used`},
		{"internal name with its own retention", "", "metadata_cleanup:\n  names:\n    - { name: retention.work-queue, retention_period: 1h }", "names[0]"},
		{"non-loopback admin without a token", "", "", "node.admin"},
		{"missing table", "  - { name: ghost, table: ghost_table, key: id, timestamp: ts, retention_period: 1d }", "", "ghost_table"},
		{"short and full name of one pass with two retentions",
			"  - { name: github.com/acme/jobs.PatchPass, table: " + e.prefix + "audit_log, key: id, timestamp: occurred_at, timestamp_format: unix, retention_period: 1d }",
			"metadata_cleanup:\n  names:\n    - { name: PatchPass, retention_period: 1h }\n    - { name: github.com/acme/jobs.PatchPass, retention_period: 24h }",
			"same pass"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := e.config(tc.passExtra, tc.top)
			if tc.name == "non-loopback admin without a token" {
				e.edit(path, "node:\n", "node:\n  admin: 0.0.0.0:9464\n")
			}
			r := retention(t, "validate", "--config", path)
			if r.code != 2 || !strings.Contains(r.stderr, tc.want) {
				t.Fatalf("exit %d, stderr %q; want exit 2 naming %q", r.code, r.stderr, tc.want)
			}
		})
	}
	t.Run("a good config", func(t *testing.T) {
		if r := retention(t, "validate", "--config", e.config("", "")); r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
	})
}

func TestADSNPasswordNeverShows(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "retention.yaml")
	body := "database:\n  driver: postgres\n  dsn: \"postgres://app:hunter2secret@127.0.0.1:1/app?sslmode=disable\"\npasses: []\n"
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	r := retention(t, "validate", "--config", path)
	if r.code != 1 || strings.Contains(r.stdout+r.stderr, "hunter2secret") || !strings.Contains(r.stderr, "app:xxxxx@") {
		t.Fatalf("exit %d, output leaks or hides too much:\n%s%s", r.code, r.stdout, r.stderr)
	}
	// RETENTION_DATABASE_URL wins over the file and is redacted the same way.
	cmd := exec.Command(binary, "validate", "--config", path)
	cmd.Env = append(os.Environ(), "RETENTION_DATABASE_URL=postgres://app:0therSecret@127.0.0.1:2/app?sslmode=disable")
	out, _ := cmd.CombinedOutput()
	if strings.Contains(string(out), "0therSecret") || !strings.Contains(string(out), "127.0.0.1:2") {
		t.Fatalf("with RETENTION_DATABASE_URL:\n%s", out)
	}
}

// TestValidateWaitsOutALockedTable runs `validate` while another session holds the
// pass's table under an ACCESS EXCLUSIVE lock: the checks time out and are retried (a
// log line says so) instead of exiting 2; once the lock goes, validate exits 0.
func TestValidateWaitsOutALockedTable(t *testing.T) {
	t.Parallel()
	e := newEnv(t, passes.DriverPostgres)
	path := e.config("", "")
	ctx := context.Background()
	holder, err := e.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Rollback()
	if _, err := holder.ExecContext(ctx, "LOCK TABLE "+e.prefix+"audit_log IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, "validate", "--config", path, "--log-format", "json")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	retrying := make(chan map[string]any, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil && m["msg"] == "database unavailable during the startup checks; retrying" {
				select {
				case retrying <- m:
				default:
				}
			}
		}
	}()
	select {
	case m := <-retrying:
		if !strings.Contains(fmt.Sprint(m["error"]), `pass "audit-log"`) {
			t.Fatalf("the retry line does not name the pass: %v", m)
		}
	case <-time.After(time.Minute): // a bound on a hang
		t.Fatal("validate did not retry the locked table's checks")
	}
	if err := holder.Rollback(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("validate after the lock went: %v", err)
	}
}
