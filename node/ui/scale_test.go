package ui_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/dbtest"
)

// cutProxy forwards TCP connections to a PostgreSQL server until cut, which closes
// every connection and the listener: the node's database becomes unreachable.
type cutProxy struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func newCutProxy(t *testing.T, target string) *cutProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, up)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(up, c); up.Close() }()
			go func() { _, _ = io.Copy(c, up); c.Close() }()
		}
	}()
	t.Cleanup(p.cut)
	return p
}

func (p *cutProxy) cut() {
	p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// With the node's database gone, every page still renders: the passes from the
// runtime's memory, and what the ledger could not answer as an error on the page.
func TestPagesWithTheDatabaseUnreachable(t *testing.T) {
	ctx := browser(t)
	u, err := url.Parse(dbtest.PostgresURL())
	if err != nil {
		t.Fatal(err)
	}
	host := u.Host
	if !strings.Contains(host, ":") {
		host += ":5432"
	}
	proxy := newCutProxy(t, host)
	u.Host = proxy.ln.Addr().String()
	s := seedSite(t, u.String())
	n := startNode(t, s.config(u.String()), token)
	poll(t, "the first sweeps", func() bool {
		p := passesJSON(t, n)["orders"]
		return p != nil && num(p["sweeps"]) != "0" && p["state"] == "waiting"
	})
	proxy.cut()
	base := n.url("/ui/")
	do(t, ctx, chromedp.Navigate(base), chromedp.WaitVisible(chromedp.CSS("#problems")))
	if got := eval[string](t, ctx, `document.getElementById('problems').innerText`); !strings.Contains(got, "ledger") {
		t.Errorf("problems = %q; want the ledger's error", got)
	}
	if rows := eval[int](t, ctx, `document.querySelectorAll('#passes tbody tr').length`); rows != len(passesJSON(t, n)) {
		t.Errorf("%d rows; want every pass /passes lists", rows)
	}
	if got := eval[int](t, ctx, `document.querySelectorAll('#problems p').length`); got > 2 {
		t.Errorf("%d problem lines; want the ledger's and one for every backlog that failed", got)
	}
	screenshot(t, ctx, "unreachable")
	for _, page := range []string{"runs", "quarantine", "settings", "passes/orders"} {
		do(t, ctx, chromedp.Navigate(base+page), chromedp.WaitVisible(chromedp.CSS("#problems")))
		if got := eval[string](t, ctx, `document.getElementById('problems').innerText`); got == "" {
			t.Errorf("%s: an empty problem", page)
		}
	}
}

// A node with 1,000 passes: the passes page lists them all. Its load time is measured
// and logged, not asserted (the machine is shared).
func TestPassesPageWithAThousandPasses(t *testing.T) {
	ctx := browser(t)
	const count = 1000
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "app.db")
	db, err := passes.Open(context.Background(), passes.DriverSQLite, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	// 1,000 passes over 50 tables, 20 on each: a thousand tables would make this test
	// about SQLite's schema handling (every CREATE re-reads the whole schema) instead of
	// the page.
	const tables = 50
	var cfg strings.Builder
	for i := range tables {
		for _, q := range []string{
			fmt.Sprintf("CREATE TABLE t%02d (id INTEGER PRIMARY KEY, at INTEGER NOT NULL)", i),
			fmt.Sprintf("CREATE INDEX t%02d_at ON t%02d (at, id)", i, i),
		} {
			if _, err := db.ExecContext(context.Background(), q); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i := range count {
		fmt.Fprintf(&cfg, "  - { name: pass-%04d, table: t%02d, key: id, timestamp: at, timestamp_format: unix, retention_period: 30d, max_startup_stagger: 1h }\n", i, i%tables)
	}
	db.Close()
	path := filepath.Join(dir, "retention.yaml")
	body := fmt.Sprintf("database:\n  driver: sqlite\n  dsn: %q\nnode:\n  admin: 127.0.0.1:0\n  admin_token: %s\npasses:\n%s", dbPath, token, cfg.String())
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	n := startNode(t, path, token)
	t.Logf("1,000 passes: the node took %v to start", time.Since(began).Round(time.Millisecond))
	want := len(passesJSON(t, n))
	for _, round := range []string{"first load (measures the backlog of 1,000 passes)", "second load (the measurement cached)"} {
		start := time.Now()
		do(t, ctx, chromedp.Navigate(n.url("/ui/")), chromedp.WaitVisible(chromedp.CSS(`tr[data-pass="pass-0999"]`)))
		wall := time.Since(start)
		timing := eval[map[string]float64](t, ctx, `(function(){ const e = performance.getEntriesByType('navigation')[0]; return {response: e.responseEnd, dom: e.domContentLoadedEventEnd, load: e.loadEventEnd}; })()`)
		t.Logf("1,000 passes, %s: %v until the last row showed; in the browser: response %.0fms, DOM ready %.0fms, loaded %.0fms",
			round, wall.Round(time.Millisecond), timing["response"], timing["dom"], timing["load"])
	}
	refresh := eval[float64](t, ctx, `(function(){ const t0 = performance.now(); return fetch(location.href + '?fragment=1').then(r => r.text()).then(() => performance.now() - t0); })()`, chromedp.EvalAwaitPromise)
	t.Logf("1,000 passes: one refresh of the live block took %.0fms", refresh)
	if rows := eval[int](t, ctx, `document.querySelectorAll('#passes tbody tr').length`); rows != want {
		t.Errorf("%d rows; /passes lists %d", rows, want)
	}
	viewport(t, ctx, "thousand-passes")
}
