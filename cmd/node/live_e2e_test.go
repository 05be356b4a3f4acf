package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/retentionkit/retention/passes"
)

// waitLogWhere waits for a log line with msg for the pass whose fields pass ok.
func (n *runningNode) waitLogWhere(t *testing.T, msg string, ok func(map[string]any) bool) map[string]any {
	t.Helper()
	for {
		m := n.waitLog(t, msg, "audit-log")
		if ok(m) {
			return m
		}
	}
}

// passField reads one field of the audit-log pass from GET /passes.
func passField(t *testing.T, get func(string) (int, string), field string) any {
	t.Helper()
	_, body := get("/passes")
	var st struct {
		Passes []map[string]any `json:"passes"`
	}
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Fatalf("/passes: %v %s", err, body)
	}
	for _, p := range st.Passes {
		if p["name"] == "audit-log" {
			return p[field]
		}
	}
	t.Fatalf("/passes has no audit-log: %s", body)
	return nil
}

// TestSettingsSetChangesARunningNode: the batch size set with `settings set` is the one
// the running node's next sweep uses, a shorter interval ends its 24-hour wait, bad
// values exit 2 naming the key and store nothing, and unset returns to the file's value.
func TestSettingsSetChangesARunningNode(t *testing.T) {
	t.Parallel()
	e := newEnv(t, passes.DriverSQLite)
	e.seed(300)
	path := e.config("    sweep_interval: 24h", "")
	e.edit(path, "node:\n", "node:\n  admin: 127.0.0.1:0\n")
	n := startRun(t, path)
	get := adminGet(t, n.waitLog(t, "admin endpoint listening", "")["addr"].(string))
	n.waitLog(t, "sweep done", "audit-log")

	bad := []struct{ key, value, want string }{
		{"pass.audit-log.batch_size", "0", `settings: pass.audit-log.batch_size: pass "audit-log": batch_size must be at least 1, got 0`},
		{"pass.audit-log.batch_delay", "soon", `pass.audit-log.batch_delay must be a duration`},
		{"pass.audit-log.pacing", "fast", `pacing must be "fixed" or "adaptive", got "fast"`},
		{"pass.nope.batch_size", "5", `pass.nope.batch_size: no pass "nope" in the configuration (passes: audit-log)`},
		{"pass.audit-log.retention_period", "1h", `"retention_period" is not a live setting`},
		{"batch_size", "5", `settings: unknown key "batch_size"`},
	}
	for _, b := range bad {
		r := retention(t, "settings", "set", "--config", path, b.key, b.value)
		if r.code != 2 || !strings.Contains(r.stderr, b.want) {
			t.Errorf("settings set %s %s: exit %d, stderr %q; want 2 and %q", b.key, b.value, r.code, r.stderr, b.want)
		}
	}
	var stored int
	if err := e.db.QueryRow("SELECT count(*) FROM " + e.prefix + "settings").Scan(&stored); err != nil || stored != 0 {
		t.Fatalf("refused settings stored %d rows (%v)", stored, err)
	}

	if r := retention(t, "settings", "set", "--config", path, "pass.audit-log.batch_size", "7"); r.code != 0 {
		t.Fatalf("settings set: exit %d: %s", r.code, r.stderr)
	}
	n.waitLogWhere(t, "settings applied", func(m map[string]any) bool { return m["batch_size"] == float64(7) })
	if size := passField(t, get, "batch_size"); size != float64(7) {
		t.Fatalf("/passes batch_size = %v", size)
	}
	if v := metricValue(t, get, `retention_pass_setting_batch_size{pass="audit-log"}`); v != 7 {
		t.Fatalf("retention_pass_setting_batch_size = %v", v)
	}
	for id := 5001; id <= 5070; id++ {
		e.seed0(id)
	}
	if r := retention(t, "settings", "set", "--config", path, "pass.audit-log.sweep_interval", "1s"); r.code != 0 {
		t.Fatalf("settings set: exit %d: %s", r.code, r.stderr)
	}
	done := n.waitLog(t, "sweep done", "audit-log") // within seconds, where the file says 24h
	if done["rows"] != float64(70) || done["batches"] != float64(11) {
		t.Fatalf("sweep after the settings: %v; want 70 rows in 10 full batches of 7 and a last empty one", done)
	}
	status := retention(t, "status", "--config", path)
	if status.code != 0 || !strings.Contains(status.stdout, "7 (live)") || !strings.Contains(status.stdout, "1s (live)") {
		t.Fatalf("status: exit %d\n%s%s", status.code, status.stdout, status.stderr)
	}
	if r := retention(t, "settings", "unset", "--config", path, "pass.audit-log.batch_size"); r.code != 0 || !strings.Contains(r.stdout, "unset") {
		t.Fatalf("settings unset: exit %d: %s %s", r.code, r.stdout, r.stderr)
	}
	n.waitLogWhere(t, "settings applied", func(m map[string]any) bool { return m["batch_size"] == float64(50) })
}

// TestPauseAndResumeActOnEveryNode: two nodes on one PostgreSQL ledger both sweep the
// pass (without cluster mode each runs every pass); `retention pause` holds both after
// their batch in flight, through later polls, and `retention resume` lets both go on.
func TestPauseAndResumeActOnEveryNode(t *testing.T) {
	t.Parallel()
	e := newEnv(t, passes.DriverPostgres)
	e.seed(3000)
	path := e.config("    batch_delay: 500ms\n    max_batches_per_sweep: 100000", "")
	e.edit(path, "batch_size: 50", "batch_size: 10")
	e.edit(path, "node:\n", "node:\n  admin: 127.0.0.1:0\n")
	expired := "state = 'done' AND occurred_at < " + fmt.Sprint(time.Now().Add(-30*24*time.Hour).Unix()) + " AND id % 50 <> 1"
	var nodes []*runningNode
	var gets []func(string) (int, string)
	for range 2 {
		n := startRun(t, path)
		gets = append(gets, adminGet(t, n.waitLog(t, "admin endpoint listening", "")["addr"].(string)))
		n.waitLog(t, "sweep started", "audit-log")
		nodes = append(nodes, n)
	}
	if r := retention(t, "pause", "--config", path, "audit-log"); r.code != 0 {
		t.Fatalf("pause: exit %d: %s", r.code, r.stderr)
	}
	for i, n := range nodes {
		n.waitLogWhere(t, "settings applied", func(m map[string]any) bool { return m["paused"] == true })
		waitFor(t, fmt.Sprintf("node %d paused", i), func() bool { return passField(t, gets[i], "state") == "paused" })
		if v := metricValue(t, gets[i], `retention_pass_paused{pass="audit-log"}`); v != 1 {
			t.Fatalf("node %d: retention_pass_paused = %v", i, v)
		}
	}
	held := e.count(expired)
	if held == 0 {
		t.Fatal("the backlog was gone before the pause: nothing shows it holding")
	}
	// A setting that both nodes must read shows that time passed, polls included.
	if r := retention(t, "settings", "set", "--config", path, "pass.audit-log.batch_delay", "0s"); r.code != 0 {
		t.Fatalf("settings set: exit %d: %s", r.code, r.stderr)
	}
	for _, n := range nodes {
		n.waitLogWhere(t, "settings applied", func(m map[string]any) bool { return m["paused"] == true && m["batch_delay"] == float64(0) })
	}
	if now := e.count(expired); now != held {
		t.Fatalf("expired rows went from %d to %d while both nodes were paused", held, now)
	}
	if r := retention(t, "resume", "--config", path, "audit-log"); r.code != 0 {
		t.Fatalf("resume: exit %d: %s", r.code, r.stderr)
	}
	for i, n := range nodes {
		n.waitLogWhere(t, "settings applied", func(m map[string]any) bool { return m["paused"] == false })
		waitFor(t, fmt.Sprintf("node %d resumed", i), func() bool { return passField(t, gets[i], "paused") == false })
	}
	waitFor(t, "drained after resume", func() bool { return e.count(expired) == 0 })
	for _, n := range nodes {
		n.waitLog(t, "sweep done", "audit-log")
	}
	if kept := e.count("id % 50 = 1 AND state = 'done'"); kept == 0 {
		t.Fatal("the rows on legal hold are gone")
	}
}
