package ui_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/retentionkit/retention/passes/dbtest"
	"github.com/retentionkit/retention/passes/ledger"
)

const token = "ui-test-token-0123456789"

// site is the seeded PostgreSQL database a browser test's node runs on: three passes
// (events, with one row a table the pass does not list refers to; orders; sessions,
// nothing expired), a dead letter, and old runs for the metadata cleanup.
type site struct {
	t      *testing.T
	exec   func(q string, args ...any)
	count  func(q string, args ...any) int
	prefix string
	ledger *ledger.Ledger
	dsn    string
}

func seedSite(t *testing.T, dsn string) *site {
	t.Helper()
	db := dbtest.Postgres(t)
	ctx := context.Background()
	p := fmt.Sprintf("ui%d_", time.Now().UnixNano()%1_000_000_000)
	s := &site{t: t, prefix: p, dsn: dsn}
	s.exec = func(q string, args ...any) {
		t.Helper()
		if _, err := db.ExecContext(ctx, strings.ReplaceAll(q, "{p}", p), args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	s.count = func(q string, args ...any) int {
		t.Helper()
		var n int
		if err := db.QueryRowContext(ctx, strings.ReplaceAll(q, "{p}", p), args...).Scan(&n); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return n
	}
	t.Cleanup(func() {
		for _, table := range []string{"refs", "events", "orders", "sessions", "quarantine", "backlog_sample", "partition_retirements", "settings", "dead_letter", "work_queue", "log", "metadata", "node", "migrations", "migration_locks"} {
			_, _ = db.ExecContext(context.Background(), "DROP TABLE IF EXISTS "+p+table)
		}
	})
	for _, table := range []string{"events", "orders", "sessions"} {
		s.exec("CREATE TABLE {p}" + table + " (id BIGINT PRIMARY KEY, at BIGINT NOT NULL)")
		s.exec("CREATE INDEX {p}" + table + "_at ON {p}" + table + " (at, id)")
	}
	s.exec("CREATE TABLE {p}refs (id BIGINT PRIMARY KEY, event_id BIGINT NOT NULL REFERENCES {p}events (id))")
	old, recent := time.Now().Add(-40*24*time.Hour).Unix(), time.Now().Add(-time.Hour).Unix()
	s.exec("INSERT INTO {p}events (id, at) SELECT g, ? FROM generate_series(1, 300) g", old)
	s.exec("INSERT INTO {p}events (id, at) SELECT g, ? FROM generate_series(301, 320) g", recent)
	s.exec("INSERT INTO {p}refs (id, event_id) VALUES (1, 5)")
	s.exec("INSERT INTO {p}orders (id, at) SELECT g, ? FROM generate_series(1, 200) g", old)
	s.exec("INSERT INTO {p}sessions (id, at) SELECT g, ? FROM generate_series(1, 50) g", recent)
	if _, err := ledger.Migrate(ctx, db, p); err != nil {
		t.Fatal(err)
	}
	l, err := ledger.New(db, p)
	if err != nil {
		t.Fatal(err)
	}
	s.ledger = l
	return s
}

// config writes the node's config: the three passes, the admin endpoint on a free
// loopback port with the token, and a metadata cleanup every second on a 30d default,
// with one name given its own 90d.
func (s *site) config(dsn string) string {
	s.t.Helper()
	var passes strings.Builder
	for _, name := range []string{"events", "orders", "sessions"} {
		fmt.Fprintf(&passes, `  - name: %s
    table: %s%s
    key: id
    timestamp: at
    timestamp_format: unix
    retention_period: 30d
    batch_size: 100
    sweep_interval: 1h
    max_startup_stagger: 0s
`, name, s.prefix, name)
	}
	body := fmt.Sprintf(`database:
  driver: postgres
  dsn: %q
node:
  admin: 127.0.0.1:0
  admin_token: %s
  shutdown_grace: 5s
passes:
%sledger:
  table_prefix: %s
metadata_cleanup:
  retention_period: 30d
  cleanup_interval: 1s
  names:
    - { name: nightly-export, retention_period: 90d }
`, dsn, token, passes.String(), s.prefix)
	path := filepath.Join(s.t.TempDir(), "retention.yaml")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		s.t.Fatal(err)
	}
	return path
}

// passesJSON is what GET /passes says, by pass name.
func passesJSON(t *testing.T, n *runningNode) map[string]map[string]any {
	t.Helper()
	code, body := n.get(t, "/passes")
	var v struct{ Passes []map[string]any }
	if code != 200 || json.Unmarshal([]byte(body), &v) != nil {
		t.Fatalf("/passes: %d %s", code, body)
	}
	out := map[string]map[string]any{}
	for _, p := range v.Passes {
		out[p["name"].(string)] = p
	}
	return out
}

// metric reads one series' value from /metrics.
func metric(t *testing.T, n *runningNode, series string) string {
	t.Helper()
	_, body := n.get(t, "/metrics")
	for _, line := range strings.Split(body, "\n") {
		if rest, ok := strings.CutPrefix(line, series+" "); ok {
			return rest
		}
	}
	t.Fatalf("/metrics has no %s", series)
	return ""
}

// pageRows reads the passes table as the browser shows it: each row's data-k cells.
const pageRows = `Array.from(document.querySelectorAll('#passes tbody tr')).map(tr => {
  const o = {name: tr.dataset.pass};
  tr.querySelectorAll('td[data-k]').forEach(td => { o[td.dataset.k] = td.textContent.trim(); });
  return o;
})`

func num(v any) string { return fmt.Sprint(v) }

// The whole dashboard against a real node on a seeded PostgreSQL database, in a real
// headless Chromium: every page, every action, the access rules.
func TestDashboardInBrowser(t *testing.T) {
	ctx := browser(t)
	s := seedSite(t, dbtest.PostgresURL())
	bg := context.Background()
	// Old runs for the cleanup: internal ones on the default retention, and one of a
	// name with its own 90d, which the override must leave alone.
	var internal []int64
	for i := range 3 {
		start := time.Now().Add(-2*time.Hour - time.Duration(i)*time.Minute)
		id, err := s.ledger.StartRun(bg, ledger.NameRunRecovery, start, start, nil)
		if err == nil {
			err = s.ledger.FinishRun(bg, id, ledger.Finish{End: start.Add(time.Second), State: ledger.Completed})
		}
		if err != nil {
			t.Fatal(err)
		}
		internal = append(internal, id)
	}
	export, err := s.ledger.StartRun(bg, "nightly-export", time.Now().Add(-2*time.Hour), time.Now(), nil)
	if err == nil {
		err = s.ledger.FinishRun(bg, export, ledger.Finish{End: time.Now().Add(-time.Hour), State: ledger.Completed})
	}
	if err != nil {
		t.Fatal(err)
	}
	letter, err := s.ledger.AddDeadLetter(bg, "orders", `pass "orders": supervision gave up after 5 restarts in 10m`, 0, time.Now().Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}

	n := startNode(t, s.config(s.dsn), token)
	poll(t, "the first sweep of every pass, and events' referenced row in quarantine", func() bool {
		ps := passesJSON(t, n)
		for _, name := range []string{"events", "orders", "sessions"} {
			if p := ps[name]; p == nil || num(p["sweeps"]) == "0" || p["state"] != "waiting" {
				return false
			}
			// The page's batches come from the ledger's last run, which the ledger
			// observer closes a moment after /passes counts the sweep.
			if runs, err := s.ledger.Runs(bg, name, 1); err != nil || len(runs) == 0 || runs[0].State == ledger.InProgress {
				return false
			}
		}
		rows, err := s.ledger.QuarantinedRows(bg, "events")
		return err == nil && len(rows) == 1
	})
	base := n.url("/ui/")

	t.Run("passes page matches /passes and /metrics", func(t *testing.T) {
		do(t, ctx, chromedp.Navigate(base), chromedp.WaitVisible(chromedp.CSS("#passes")))
		rows := eval[[]map[string]string](t, ctx, pageRows)
		api := passesJSON(t, n)
		if len(rows) != len(api) {
			t.Fatalf("the page lists %d passes, /passes %d: %v", len(rows), len(api), rows)
		}
		for _, r := range rows {
			p := api[r["name"]]
			if p == nil {
				t.Fatalf("the page lists %q, /passes does not", r["name"])
			}
			if !strings.HasPrefix(r["name"], "retention.") { // the internal loops sweep every second
				for k, want := range map[string]string{"state": num(p["state"]), "last_sweep_rows": num(p["last_sweep_rows"]), "consecutive_failures": num(p["consecutive_failures"]), "last_sweep_reason": num(p["last_sweep_reason"])} {
					if r[k] != want {
						t.Errorf("%s %s: page %q, /passes %q", r["name"], k, r[k], want)
					}
				}
			}
		}
		byName := map[string]map[string]string{}
		for _, r := range rows {
			byName[r["name"]] = r
		}
		for _, name := range []string{"events", "orders", "sessions"} {
			for k, series := range map[string]string{"backlog": "retention_backlog_rows", "held": "retention_held_rows", "quarantined": "retention_quarantined_rows"} {
				if got, want := byName[name][k], metric(t, n, series+`{pass="`+name+`"}`); got != want {
					t.Errorf("%s %s: page %q, /metrics %q", name, k, got, want)
				}
			}
		}
		if got := byName["events"]; got["quarantined"] != "1" || got["held"] != "0" || got["last_sweep_rows"] != "299" {
			t.Errorf("events = %v; want 299 rows deleted, the referenced one quarantined (not held: no block child keeps it)", got)
		}
		if byName["orders"]["batches"] != "3" {
			t.Errorf("orders batches = %q; want 3 (200 rows in batches of 100, the last finding none)", byName["orders"]["batches"])
		}
		screenshot(t, ctx, "passes")
	})

	t.Run("an action without the token is refused", func(t *testing.T) {
		before := num(passesJSON(t, n)["sessions"]["sweeps"])
		status := eval[int](t, ctx, `fetch('/ui/actions/trigger/sessions', {method: 'POST'}).then(r => r.status)`, chromedp.EvalAwaitPromise)
		if status != 401 {
			t.Errorf("a same-origin POST without the token: %d, want 401", status)
		}
		for _, h := range []map[string]string{nil, {"Authorization": "Bearer wrong"}} {
			if code, body := n.post(t, "/ui/actions/trigger/sessions", h, ""); code != 401 {
				t.Errorf("POST with %v: %d %s, want 401", h, code, body)
			}
		}
		if code, _ := n.post(t, "/ui/actions/settings", nil, "value=1m"); code != 401 {
			t.Errorf("settings without the token: %d", code)
		}
		if after := num(passesJSON(t, n)["sessions"]["sweeps"]); after != before {
			t.Errorf("sessions swept %s -> %s times: a refused trigger ran", before, after)
		}
		if runs, _ := s.ledger.FindRuns(bg, ledger.RunFilter{Name: ledger.NameAdminActions}); len(runs) != 0 {
			t.Errorf("refused actions were recorded: %+v", runs)
		}
	})

	t.Run("log in", func(t *testing.T) {
		do(t, ctx, chromedp.Navigate(base+"login"), chromedp.WaitVisible(chromedp.CSS("#token")))
		screenshot(t, ctx, "login")
		do(t, ctx, chromedp.SendKeys(chromedp.CSS("#token"), "not the token"), chromedp.Click(chromedp.CSS("#login-submit")), chromedp.WaitVisible(chromedp.CSS("#login-failed")))
		do(t, ctx, chromedp.SendKeys(chromedp.CSS("#token"), token), chromedp.Click(chromedp.CSS("#login-submit")), chromedp.WaitVisible(chromedp.CSS("#logout")))
		if c := eval[string](t, ctx, `document.cookie`); strings.Contains(c, "retention_ui") {
			t.Errorf("a script reads the session cookie: %q; want it HttpOnly", c)
		}
	})

	t.Run("a cross-site POST is refused", func(t *testing.T) {
		before := num(passesJSON(t, n)["sessions"]["sweeps"])
		// Another site (localhost is not 127.0.0.1 to the browser) whose page posts a
		// trigger form to the node while the browser holds a session.
		evil := newEvilSite(t, n.url("/ui/actions/trigger/sessions"))
		do(t, ctx, chromedp.Navigate(evil))
		waitFor(t, ctx, "the refusal", `document.getElementById('refused') !== null`)
		if got := eval[string](t, ctx, `document.getElementById('refused').innerText`); !strings.Contains(got, "cross-site") {
			t.Errorf("refusal = %q", got)
		}
		for _, h := range []map[string]string{{"Authorization": "Bearer " + token, "Sec-Fetch-Site": "cross-site"}, {"Authorization": "Bearer " + token, "Origin": "http://evil.example"}} {
			if code, body := n.post(t, "/ui/actions/trigger/sessions", h, ""); code != 403 || !strings.Contains(body, "cross-site") {
				t.Errorf("POST with the token and %v: %d %s, want 403", h, code, body)
			}
		}
		if after := num(passesJSON(t, n)["sessions"]["sweeps"]); after != before {
			t.Errorf("sessions swept %s -> %s times: a cross-site trigger ran", before, after)
		}
		if runs, _ := s.ledger.FindRuns(bg, ledger.RunFilter{Name: ledger.NameAdminActions}); len(runs) != 0 {
			t.Errorf("refused actions were recorded: %+v", runs)
		}
	})

	t.Run("a trigger with the token starts a sweep the page shows", func(t *testing.T) {
		s.exec("INSERT INTO {p}events (id, at) SELECT g, ? FROM generate_series(10001, 10120) g", time.Now().Add(-40*24*time.Hour).Unix())
		do(t, ctx, chromedp.Navigate(base), chromedp.WaitVisible(chromedp.CSS(`button.trigger[data-pass="events"]`)))
		do(t, ctx, chromedp.Click(chromedp.CSS(`button.trigger[data-pass="events"]`)), chromedp.WaitVisible(chromedp.CSS("#note")))
		waitFor(t, ctx, "events' sweep of the 120 new rows", `(function(){ const td = document.querySelector('tr[data-pass="events"] td[data-k="last_sweep_rows"]'); return td !== null && td.textContent.trim() === "120"; })()`)
		runs, err := s.ledger.FindRuns(bg, ledger.RunFilter{Name: ledger.NameAdminActions})
		if err != nil || len(runs) != 1 {
			t.Fatalf("recorded actions = %+v, %v; want the trigger", runs, err)
		}
		logs, _ := s.ledger.Logs(bg, runs[0].ID)
		if len(logs) != 1 || !strings.HasPrefix(logs[0].Message, "trigger events: sweep queued as run ") || !strings.Contains(logs[0].Message, "(from 127.0.0.1:") {
			t.Fatalf("the trigger's log = %+v", logs)
		}
		// The queued run is the sweep's own: the node claimed it and finished it with the
		// 120 rows.
		var queued int64
		if _, err := fmt.Sscanf(logs[0].Message, "trigger events: sweep queued as run %d", &queued); err != nil {
			t.Fatal(err)
		}
		poll(t, "the queued run to finish", func() bool {
			rs, _ := s.ledger.FindRuns(bg, ledger.RunFilter{Name: "events", State: ledger.Completed})
			for _, r := range rs {
				if r.ID == queued && r.RowsDeleted == 120 {
					return true
				}
			}
			return false
		})
	})

	t.Run("the page refreshes itself without reloading", func(t *testing.T) {
		eval[bool](t, ctx, `(window.__notReloaded = true)`)
		s.exec("INSERT INTO {p}events (id, at) SELECT g, ? FROM generate_series(20001, 20030) g", time.Now().Add(-40*24*time.Hour).Unix())
		if code, body := n.post(t, "/trigger/events", map[string]string{"Authorization": "Bearer " + token}, ""); code != 202 {
			t.Fatalf("POST /trigger/events: %d %s", code, body)
		}
		waitFor(t, ctx, "the refreshed row", `(function(){ const td = document.querySelector('tr[data-pass="events"] td[data-k="last_sweep_rows"]'); return td !== null && td.textContent.trim() === "30"; })()`)
		if !eval[bool](t, ctx, `window.__notReloaded === true && Number(document.getElementById('live').dataset.generation) > 0`) {
			t.Error("the page reloaded, or no refresh swapped the live block")
		}
	})

	t.Run("per-pass page", func(t *testing.T) {
		do(t, ctx, chromedp.Navigate(base+"passes/events"), chromedp.WaitVisible(chromedp.CSS("#sweeps-chart")))
		if bars := eval[int](t, ctx, `document.querySelectorAll('#sweeps-chart rect.bar').length`); bars < 3 {
			t.Errorf("%d bars; want one per sweep, at least 3", bars)
		}
		if title := eval[string](t, ctx, `Array.from(document.querySelectorAll('#sweeps-chart rect.bar title')).map(t => t.textContent).join("\n")`); !strings.Contains(title, ": 120 rows,") || !strings.Contains(title, ": 30 rows,") {
			t.Errorf("bar titles:\n%s\nwant the sweeps of 120 and 30 rows", title)
		}
		if pts := eval[int](t, ctx, `document.querySelectorAll('#backlog-chart circle.pt').length`); pts < 1 {
			t.Errorf("%d backlog points; want the sample the first measurement kept", pts)
		}
		if runs := eval[int](t, ctx, `document.querySelectorAll('table.runs tr.run').length`); runs < 3 {
			t.Errorf("%d recent runs", runs)
		}
		screenshot(t, ctx, "pass")
	})

	t.Run("runs filtered by pass, state and time, with log rows", func(t *testing.T) {
		do(t, ctx, chromedp.Navigate(base+"runs?pass=events&state=Completed"), chromedp.WaitVisible(chromedp.CSS("table.runs")))
		got := eval[[]string](t, ctx, `Array.from(document.querySelectorAll('tr.run')).map(tr => tr.children[1].textContent + "/" + tr.children[2].textContent)`)
		if len(got) < 3 {
			t.Errorf("runs = %v; want events' three sweeps at least", got)
		}
		for _, g := range got {
			if g != "events/Completed" {
				t.Errorf("run %s in a filter for events/Completed", g)
			}
		}
		screenshot(t, ctx, "runs")
		do(t, ctx, chromedp.Navigate(base+"runs?pass="+ledger.NameAdminActions), chromedp.WaitVisible(chromedp.CSS("table.runs")))
		if logs := eval[string](t, ctx, `Array.from(document.querySelectorAll('ul.logs li')).map(li => li.textContent).join("\n")`); !strings.Contains(logs, "trigger events: sweep queued as run") {
			t.Errorf("log rows:\n%s\nwant the trigger's", logs)
		}
		do(t, ctx, chromedp.Navigate(base+"runs?pass=events&since=2099-01-01T00:00"), chromedp.WaitVisible(chromedp.CSS("table.runs")))
		if n := eval[int](t, ctx, `document.querySelectorAll('tr.run').length`); n != 0 {
			t.Errorf("%d runs since 2099", n)
		}
	})

	t.Run("quarantine release and dead-letter retry take effect in the ledger", func(t *testing.T) {
		do(t, ctx, chromedp.Navigate(base+"quarantine"), chromedp.WaitVisible(chromedp.CSS(`#quarantine tr[data-pass="events"]`)))
		if row := eval[string](t, ctx, `document.querySelector('#quarantine tr[data-pass="events"]').innerText`); !strings.Contains(row, s.prefix+"refs") || !strings.Contains(row, "[5]") {
			t.Errorf("quarantine row = %q; want key [5] and the referencing table %srefs", row, s.prefix)
		}
		screenshot(t, ctx, "quarantine")
		do(t, ctx, chromedp.Click(chromedp.CSS(`#quarantine tr[data-pass="events"] button.release`)), chromedp.WaitVisible(chromedp.CSS("#note")))
		if rows, err := s.ledger.QuarantinedRows(bg, "events"); err != nil || len(rows) != 0 {
			t.Errorf("quarantine after release = %+v, %v", rows, err)
		}
		do(t, ctx, chromedp.Click(chromedp.CSS(fmt.Sprintf(`#deadletters tr[data-id="%d"] button.retry`, letter))), chromedp.WaitVisible(chromedp.CSS("#note")))
		var retried int64
		poll(t, "the retry's run to complete", func() bool {
			letters, err := s.ledger.DeadLetters(bg)
			if err != nil || len(letters) != 1 || letters[0].RetryMetadataID == nil {
				return false
			}
			retried = *letters[0].RetryMetadataID
			runs, _ := s.ledger.FindRuns(bg, ledger.RunFilter{Name: "orders"})
			for _, r := range runs {
				if r.ID == retried && r.State == ledger.Completed {
					return true
				}
			}
			return false
		})
		waitFor(t, ctx, "the retried dead letter on the page", fmt.Sprintf(`(function(){ const td = document.querySelector('#deadletters tr[data-id="%d"] td[data-k="retry"]'); return td !== null && td.textContent.trim() === "%d"; })()`, letter, retried))
		kinds := map[string]bool{}
		runs, _ := s.ledger.FindRuns(bg, ledger.RunFilter{Name: ledger.NameAdminActions})
		for _, r := range runs {
			kinds[*r.StopReason] = true
		}
		if !kinds["release"] || !kinds["retry"] {
			t.Errorf("recorded actions %v; want the release and the retry", kinds)
		}
	})

	t.Run("the settings edit changes the override and the next cleanup uses it", func(t *testing.T) {
		do(t, ctx, chromedp.Navigate(base+"settings"), chromedp.WaitVisible(chromedp.CSS("#edit-retention")))
		if src := eval[string](t, ctx, `document.querySelector('#retention dd[data-k="source"]').innerText`); !strings.Contains(src, "configuration file") {
			t.Errorf("source = %q before any override", src)
		}
		if names := eval[string](t, ctx, `document.getElementById('names').innerText`); !strings.Contains(names, "nightly-export") || !strings.Contains(names, "its own") {
			t.Errorf("names table = %q", names)
		}
		if left := s.count("SELECT count(*) FROM {p}metadata WHERE id IN (?, ?, ?, ?)", internal[0], internal[1], internal[2], export); left != 4 {
			t.Fatalf("%d of the 4 old runs are there before the edit; the 30d default keeps them all", left)
		}
		eval[bool](t, ctx, `(document.getElementById('retention-value').value = '', true)`)
		do(t, ctx, chromedp.SendKeys(chromedp.CSS("#retention-value"), "1h"), chromedp.Click(chromedp.CSS("#save-retention")), chromedp.WaitVisible(chromedp.CSS("#note")))
		if d, err := s.ledger.CleanupRetentionOverride(bg); err != nil || d != time.Hour {
			t.Fatalf("override = %v, %v; want 1h", d, err)
		}
		waitFor(t, ctx, "the override on the page", `document.querySelector('#retention dd[data-k="source"]').innerText.includes('runtime override')`)
		screenshot(t, ctx, "settings")
		poll(t, "the next cleanup to prune the internal runs older than 1h", func() bool {
			return s.count("SELECT count(*) FROM {p}metadata WHERE id IN (?, ?, ?)", internal[0], internal[1], internal[2]) == 0
		})
		if s.count("SELECT count(*) FROM {p}metadata WHERE id = ?", export) != 1 {
			t.Error("the cleanup pruned nightly-export's run: the override moved a name with its own retention")
		}
		runs, _ := s.ledger.FindRuns(bg, ledger.RunFilter{Name: ledger.NameAdminActions})
		if len(runs) == 0 || *runs[0].StopReason != "settings" {
			t.Errorf("the settings change is not the last recorded action: %+v", runs)
		}
	})

	t.Run("cluster page says cluster mode is off", func(t *testing.T) {
		do(t, ctx, chromedp.Navigate(base+"cluster"), chromedp.WaitVisible(chromedp.CSS("#cluster-off")))
	})

	t.Run("nothing is fetched from elsewhere", func(t *testing.T) {
		do(t, ctx, chromedp.Navigate(base))
		external := eval[[]string](t, ctx, `performance.getEntriesByType('resource').map(e => e.name).filter(u => !u.startsWith(location.origin))`)
		if len(external) > 0 {
			t.Errorf("the page loaded %v from elsewhere", external)
		}
	})
}

// newEvilSite serves, from http://localhost:PORT (another site than 127.0.0.1 to the
// browser), a page that posts a form to target as soon as it loads.
func newEvilSite(t *testing.T, target string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	page := `<!doctype html><form id="f" method="post" action="` + target + `"><input name="csrf" value="guessed"></form><script>document.getElementById("f").submit()</script>`
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(page))
	}), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return "http://localhost:" + port + "/"
}
