// End-to-end tests of what an operator watches: /healthz, /readyz and the metrics.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/retentionkit/retention/node/health"
)

// TestATableThatDisappearsIsConfigurationDrift renames the pass's table away under a
// running node: the pass reports configuration drift (one warning per failure, /readyz
// 503 naming the pass and why) and keeps retrying; once the table is back it sweeps
// again and the node is ready.
func TestATableThatDisappearsIsConfigurationDrift(t *testing.T) {
	eachDriver(t, func(t *testing.T, e *env) {
		e.seed(200)
		path := e.config("    sweep_interval: 24h", "")
		e.edit(path, "node:\n", "node:\n  admin: 127.0.0.1:0\n")
		n := startRun(t, path)
		addr := n.waitLog(t, "admin endpoint listening", "")["addr"].(string)
		n.waitLog(t, "sweep done", "audit-log")
		readyz := func() (int, readyBody) {
			resp, err := http.Get("http://" + addr + "/readyz")
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var body readyBody
			if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
				t.Fatal(err)
			}
			return resp.StatusCode, body
		}
		if code, body := readyz(); code != http.StatusOK || body.Status != "ready" {
			t.Fatalf("/readyz before the drift = %d %+v", code, body)
		}

		e.exec("ALTER TABLE " + e.prefix + "audit_log RENAME TO " + e.prefix + "audit_log_away")
		if r := retention(t, "trigger", "--config", path, "audit-log"); r.code != 0 {
			t.Fatalf("trigger: exit %d: %s", r.code, r.stderr)
		}
		const drift = "configuration drift: a table or column the pass was configured with is missing; retrying"
		first := n.waitLog(t, drift, "audit-log")
		if !strings.Contains(fmt.Sprint(first["error"]), "audit_log") {
			t.Fatalf("the drift line does not say what is missing: %v", first)
		}
		code, body := readyz()
		if code != http.StatusServiceUnavailable || body.Status != "degraded" || len(body.Passes) != 1 ||
			body.Passes[0].Pass != "audit-log" || body.Passes[0].Reason != "configuration_drift" || !strings.Contains(body.Passes[0].Error, "audit_log") {
			t.Fatalf("/readyz in drift = %d %+v", code, body)
		}
		get := func(p string) (int, string) {
			resp, err := http.Get("http://" + addr + p)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, string(b)
		}
		// The next failure says it once: no other line of the pass comes between.
		for timeout := time.After(time.Minute); ; { // a bound on a hang
			var m map[string]any
			select {
			case line, ok := <-n.lines:
				if !ok {
					t.Fatal("the node exited during the drift")
				}
				m = line
			case <-timeout:
				t.Fatal("no second drift line")
			}
			if m["pass"] != "audit-log" {
				continue
			}
			if m["msg"] != drift {
				t.Fatalf("a second line for one drift failure: %v", m)
			}
			break
		}

		// The second drift line means the metrics observer has had the first restart.
		if v := metricValue(t, get, `retention_configuration_drift{pass="audit-log"}`); v != 1 {
			t.Fatalf("retention_configuration_drift in drift = %v", v)
		}

		e.exec("ALTER TABLE " + e.prefix + "audit_log_away RENAME TO " + e.prefix + "audit_log")
		n.waitLog(t, "configuration drift cleared: the pass swept again", "audit-log")
		if code, body := readyz(); code != http.StatusOK || body.Status != "ready" {
			t.Fatalf("/readyz after the table came back = %d %+v", code, body)
		}
		// Observers hear each event in turn: once the log observer logs the next sweep's
		// start, the metrics observer has had the sweep that cleared the drift.
		if r := retention(t, "trigger", "--config", path, "audit-log"); r.code != 0 {
			t.Fatalf("trigger: exit %d: %s", r.code, r.stderr)
		}
		n.waitLog(t, "sweep started", "audit-log")
		if v := metricValue(t, get, `retention_configuration_drift{pass="audit-log"}`); v != 0 {
			t.Fatalf("retention_configuration_drift after the table came back = %v", v)
		}
		if err := n.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if err := n.cmd.Wait(); err != nil {
			t.Fatalf("run exited with %v after SIGTERM", err)
		}
	})
}

// readyBody is /readyz's JSON body as docs/node.md documents it.
type readyBody struct {
	Status string           `json:"status"`
	Passes []health.Problem `json:"passes"`
}
