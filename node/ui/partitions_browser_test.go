package ui_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/retentionkit/retention/passes/dbtest"
	"github.com/retentionkit/retention/passes/ledger"
)

// Expired but contended, on every surface of a running node: a session holds a lock on
// the oldest of two wholly expired partitions, so the first sweep's retire phase gives up
// at its lock_timeout. `retention status`, GET /passes and the dashboard's passes page
// then say two expired partitions are left, and that they are contended; once the
// holder is gone, a later sweep retires them and all three clear.
func TestExpiredButContendedSurfaces(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	db := dbtest.Postgres(t)
	bg := context.Background()
	p := fmt.Sprintf("uip%d_", time.Now().UnixNano()%1_000_000_000)
	exec1 := func(q string) {
		t.Helper()
		if _, err := db.ExecContext(bg, strings.ReplaceAll(q, "{p}", p)); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	t.Cleanup(func() {
		for _, table := range []string{"parts", "parts_m1", "parts_m2", "parts_rest", "quarantine", "backlog_sample", "partition_retirements", "settings", "dead_letter", "work_queue", "log", "metadata", "node", "migrations", "migration_locks"} {
			_, _ = db.ExecContext(context.Background(), "DROP TABLE IF EXISTS "+p+table)
		}
	})
	exec1(`CREATE TABLE {p}parts (id BIGINT NOT NULL, at TIMESTAMPTZ NOT NULL, PRIMARY KEY (at, id)) PARTITION BY RANGE (at)`)
	exec1(`CREATE TABLE {p}parts_m1 PARTITION OF {p}parts FOR VALUES FROM ('2000-01-01') TO ('2000-02-01')`)
	exec1(`CREATE TABLE {p}parts_m2 PARTITION OF {p}parts FOR VALUES FROM ('2000-02-01') TO ('2000-03-01')`)
	exec1(`CREATE TABLE {p}parts_rest PARTITION OF {p}parts FOR VALUES FROM ('2000-03-01') TO (MAXVALUE)`)
	exec1(`INSERT INTO {p}parts (id, at) VALUES (1, '2000-01-10'), (2, '2000-02-10'), (3, now())`)
	if _, err := ledger.Migrate(bg, db, p); err != nil {
		t.Fatal(err)
	}
	holder, err := db.BeginTx(bg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = holder.Rollback() }()
	if _, err := holder.ExecContext(bg, "LOCK TABLE "+p+"parts_m1 IN ACCESS SHARE MODE"); err != nil {
		t.Fatal(err)
	}
	body := fmt.Sprintf(`database:
  driver: postgres
  dsn: %q
node:
  admin: 127.0.0.1:0
  admin_token: %s
  shutdown_grace: 5s
passes:
  - name: parts
    table: %sparts
    key: [at, id]
    timestamp: at
    retention_period: 1h
    batch_size: 100
    sweep_interval: 1h
    max_startup_stagger: 0s
    partitions:
      lock_timeout: 200ms
ledger:
  table_prefix: %s
`, dbtest.PostgresURL(), token, p, p)
	path := filepath.Join(t.TempDir(), "retention.yaml")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	n := startNode(t, path, token)
	// swept waits until the pass's sweep number k has ended and the ledger closed its
	// run, then returns the pass's /passes object.
	swept := func(k int) map[string]any {
		t.Helper()
		var pass map[string]any
		poll(t, fmt.Sprintf("sweep %d of parts", k), func() bool {
			pass = passesJSON(t, n)["parts"]
			if pass == nil || num(pass["sweeps"]) < fmt.Sprint(k) || pass["state"] != "waiting" {
				return false
			}
			l, err := ledger.New(db, p)
			if err != nil {
				t.Fatal(err)
			}
			runs, err := l.Runs(bg, "parts", 1)
			return err == nil && len(runs) == 1 && runs[0].State != ledger.InProgress
		})
		return pass
	}
	// statusLine is the fields after the pass of `retention status`'s line of table kind
	// (partitions, retired) for parts; ok is false when it has none.
	statusLine := func(kind string) (string, bool, string) {
		t.Helper()
		out, err := exec.Command(binary, "status", "--config", path).CombinedOutput()
		if err != nil {
			t.Fatalf("retention status: %v\n%s", err, out)
		}
		for _, line := range strings.Split(string(out), "\n") {
			if f := strings.Fields(line); len(f) >= 3 && f[0] == kind && f[1] == "parts" {
				return strings.Join(f[2:], " "), true, string(out)
			}
		}
		return "", false, string(out)
	}
	status := func() string {
		t.Helper()
		line, ok, out := statusLine("partitions")
		if !ok {
			t.Fatalf("retention status has no partitions line for parts:\n%s", out)
		}
		return line
	}
	cell := func() (string, string) {
		t.Helper()
		do(t, ctx, chromedp.Navigate(n.url("/ui/")), chromedp.WaitVisible(chromedp.CSS("#passes")))
		return eval[string](t, ctx, `document.querySelector('#passes tr[data-pass="parts"] td[data-k="expired_partitions_left"]').textContent.trim()`),
			eval[string](t, ctx, `document.querySelector('#passes tr[data-pass="parts"] td[data-k="expired_partitions_left"]').title`)
	}

	first := swept(1)
	if num(first["expired_partitions_left"]) != "2" || !strings.HasPrefix(fmt.Sprint(first["expired_partitions_reason"]), "contended: ") {
		t.Fatalf("/passes after the contended sweep: %v left, reason %v; want 2, contended", first["expired_partitions_left"], first["expired_partitions_reason"])
	}
	if got := status(); !strings.HasPrefix(got, "2 partition ") || !strings.Contains(got, "parts_m1 [") || !strings.Contains(got, " contended: ") {
		t.Fatalf("status after the contended sweep: %q; want 2 left, the contended partition's report", got)
	}
	if text, title := cell(); text != "2 contended" || !strings.HasPrefix(title, "contended: ") {
		t.Fatalf("dashboard cell after the contended sweep: %q (title %q); want 2 contended", text, title)
	}
	screenshot(t, ctx, "passes-expired-contended")

	if err := holder.Rollback(); err != nil {
		t.Fatal(err)
	}
	// Autovacuum may hold the fresh partition a moment after the holder is gone: sweeps
	// are asked for until one retires both (a bound, not a timing assertion).
	for k := 2; ; k++ {
		if k > 20 {
			t.Fatal("no later sweep retired the expired partitions")
		}
		if code, body := n.post(t, "/trigger/parts", map[string]string{"Authorization": "Bearer " + token}, ""); code/100 != 2 {
			t.Fatalf("trigger: %d %s", code, body)
		}
		if num(swept(k)["expired_partitions_left"]) == "0" {
			break
		}
	}
	if pass := passesJSON(t, n)["parts"]; pass["expired_partitions_reason"] != nil {
		t.Fatalf("/passes once retired still gives a reason: %v", pass["expired_partitions_reason"])
	}
	if got := status(); got != "0 -" {
		t.Fatalf("status once retired: %q; want 0 -", got)
	}
	if text, _ := cell(); text != "—" {
		t.Fatalf("dashboard cell once retired: %q; want —", text)
	}
	// The node journals every retirement in its ledger: the contended attempt on m1
	// and the retirements of both, each entry settled (the node was running throughout).
	l, err := ledger.New(db, p)
	if err != nil {
		t.Fatal(err)
	}
	entries, err := l.PartitionRetirements(bg, "parts", 0)
	if err != nil {
		t.Fatal(err)
	}
	outcomes := map[string][]string{}
	for _, e := range entries {
		name := e.Partition[strings.LastIndex(e.Partition, ".")+1:]
		outcomes[name] = append(outcomes[name], e.Outcome)
		if e.SettledAt == nil || e.Mode != "drop" || e.Lower == "" || e.Upper == "" || e.NodeID == nil || *e.NodeID == "" {
			t.Errorf("journal entry %+v: want settled, mode drop, both bounds, the node's id", e)
		}
	}
	// retiredOnce: the newest entry says retired and every older one contended (a
	// later sweep may meet autovacuum's lock too).
	retiredOnce := func(o []string) bool {
		return len(o) > 0 && o[0] == "retired" && !slices.ContainsFunc(o[1:], func(s string) bool { return s != "contended" })
	}
	m1, m2 := outcomes[p+"parts_m1"], outcomes[p+"parts_m2"]
	if !slices.Contains(m1, "contended") || !retiredOnce(m1) || !retiredOnce(m2) {
		t.Fatalf("journal outcomes, newest first, %v; want m1 contended, then retired once; m2 retired once", outcomes)
	}
	// `retention status` shows the pass's latest entry: m2, the last one retired.
	if line, ok, out := statusLine("retired"); !ok || !strings.Contains(line, p+"parts_m2 [") || !strings.Contains(line, " drop retired ") {
		t.Fatalf("status's retired line for parts: %q; want parts_m2, drop, retired:\n%s", line, out)
	}
}
