package ui_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/node/admin"
	"github.com/retentionkit/retention/node/ui"
	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/dbtest"
	"github.com/retentionkit/retention/passes/ledger"
)

// startedRuntime is a started runtime with the named passes, each finding nothing to
// delete and waiting out a long stagger before its first sweep.
func startedRuntime(t testing.TB, names ...string) *actors.Runtime {
	t.Helper()
	purge := passes.PassFunc(func(context.Context, int, time.Time) (int, error) { return 0, nil })
	return startedRuntimeOf(t, purge, names...)
}

// startedRuntimeOf is startedRuntime with every pass running purge.
func startedRuntimeOf(t testing.TB, purge passes.PassFunc, names ...string) *actors.Runtime {
	t.Helper()
	quiet := logrus.New()
	quiet.SetOutput(io.Discard)
	rt := actors.New(actors.Config{Logger: quiet})
	opts := passes.DefaultOptions()
	opts.RetentionPeriod = passes.Retain(24 * time.Hour)
	opts.MaxStartupStagger = time.Hour
	for _, name := range names {
		if err := rt.Register(passes.Registration{Name: name, New: passes.Reuse(purge), Options: opts}); err != nil {
			t.Fatal(err)
		}
	}
	if err := rt.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Stop(context.Background()) })
	return rt
}

// sqliteLedger is a migrated ledger on a fresh SQLite database.
func sqliteLedger(t testing.TB) *ledger.Ledger {
	t.Helper()
	db := dbtest.SQLite(t)
	if _, err := ledger.Migrate(context.Background(), db, "r_"); err != nil {
		t.Fatal(err)
	}
	l, err := ledger.New(db, "r_")
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// mounted is the dashboard behind the admin handler, as the node serves it.
func mounted(t *testing.T, cfg ui.Config) http.Handler {
	t.Helper()
	h, err := ui.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return admin.New(admin.Config{Runtime: cfg.Runtime, Token: cfg.Token, UI: h})
}

type call struct {
	method, path, from, body string
	header                   map[string]string
	cookie                   *http.Cookie
}

func (c call) do(h http.Handler) *httptest.ResponseRecorder {
	req := httptest.NewRequest(c.method, c.path, strings.NewReader(c.body))
	if c.from != "" {
		req.RemoteAddr = c.from
	}
	if c.body != "" {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range c.header {
		req.Header.Set(k, v)
	}
	if c.cookie != nil {
		req.AddCookie(c.cookie)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

const (
	local  = "127.0.0.1:40000"
	local6 = "[::1]:40000"
	remote = "203.0.113.7:40000"
)

// Reading: open on loopback, the token elsewhere (as a bearer header or the session
// cookie); with no token configured, nobody reads from elsewhere.
func TestReadRule(t *testing.T) {
	rt := startedRuntime(t, "audit-log")
	withToken := mounted(t, ui.Config{Runtime: rt, Token: token})
	noToken := mounted(t, ui.Config{Runtime: rt})
	strict := mounted(t, ui.Config{Runtime: rt, Token: token, ReadNeedsToken: true})
	session := login(t, withToken)
	cases := []struct {
		name string
		h    http.Handler
		c    call
		want int
	}{
		{"loopback, no token", withToken, call{from: local}, 200},
		{"loopback v6, no token", withToken, call{from: local6}, 200},
		{"elsewhere, no token", withToken, call{from: remote}, 401},
		{"elsewhere, wrong token", withToken, call{from: remote, header: map[string]string{"Authorization": "Bearer nope"}}, 401},
		{"elsewhere, bearer token", withToken, call{from: remote, header: map[string]string{"Authorization": "Bearer " + token}}, 200},
		{"elsewhere, session cookie", withToken, call{from: remote, cookie: session}, 200},
		{"elsewhere, none configured", noToken, call{from: remote}, 403},
		{"loopback, none configured", noToken, call{from: local}, 200},
		{"loopback behind a proxy (ReadNeedsToken)", strict, call{from: local}, 401},
		{"loopback behind a proxy, with the cookie", strict, call{from: local, cookie: session}, 200},
	}
	// A reader turned away gets the login form, which brings them back where they were.
	away := call{method: http.MethodGet, path: "/ui/runs?pass=audit-log", from: remote}.do(withToken).Body.String()
	if !strings.Contains(away, `name="next" value="/ui/runs?pass=audit-log"`) {
		t.Errorf("the login form does not lead back to the page:\n%.1500s", away)
	}
	for _, c := range cases {
		for _, path := range []string{"/ui/", "/ui/runs", "/ui/passes/audit-log", "/ui/settings", "/ui/quarantine", "/ui/cluster"} {
			c.c.method, c.c.path = http.MethodGet, path
			if got := c.c.do(c.h); got.Code != c.want {
				t.Errorf("%s, %s: %d, want %d\n%.300s", c.name, path, got.Code, c.want, got.Body)
			}
		}
	}
}

// login posts the token to the login form and returns the session cookie, checking
// its attributes.
func login(t *testing.T, h http.Handler) *http.Cookie {
	t.Helper()
	bad := call{method: http.MethodPost, path: "/ui/login", from: local, body: "token=wrong"}.do(h)
	if bad.Code != http.StatusUnauthorized || len(bad.Result().Cookies()) != 0 {
		t.Fatalf("a wrong token: %d, cookies %v", bad.Code, bad.Result().Cookies())
	}
	rec := call{method: http.MethodPost, path: "/ui/login", from: local, body: "token=" + token + "&next=" + url.QueryEscape("//evil.example/")}.do(h)
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/ui/" {
		t.Fatalf("login: %d to %q; want 303 to /ui/ (a next outside the dashboard is not followed)", rec.Code, rec.Header().Get("Location"))
	}
	cookies := rec.Result().Cookies()
	if len(cookies) != 1 {
		t.Fatalf("cookies %v", cookies)
	}
	c := cookies[0]
	if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/ui/" || c.Value == "" || strings.Contains(c.Value, token) {
		t.Errorf("cookie %+v: want HttpOnly, SameSite=Strict, path /ui/, a value that is not the token", c)
	}
	return c
}

var csrfField = regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`)

// Actions: the token always, the CSRF token with a cookie, never cross-site; a good
// one is recorded in the ledger, a refused one nowhere.
func TestActionRule(t *testing.T) {
	rt := startedRuntime(t, "audit-log")
	l := sqliteLedger(t)
	plan, _ := ledger.CleanupConfig{}.Build()
	h := mounted(t, ui.Config{Runtime: rt, Ledger: l, Token: token, Cleanup: plan})
	session := login(t, h)
	page := call{method: http.MethodGet, path: "/ui/settings", from: remote, cookie: session}.do(h)
	m := csrfField.FindStringSubmatch(page.Body.String())
	if m == nil {
		t.Fatalf("no CSRF field on the settings page of a logged-in reader:\n%s", page.Body)
	}
	csrf := m[1]
	bearer := map[string]string{"Authorization": "Bearer " + token}
	cases := []struct {
		name string
		c    call
		want int
	}{
		{"no token", call{from: local, body: "value=2h"}, 401},
		{"wrong bearer", call{from: local, header: map[string]string{"Authorization": "Bearer x"}, body: "value=2h"}, 401},
		{"cookie, no CSRF token", call{from: local, cookie: session, body: "value=2h"}, 403},
		{"cookie, wrong CSRF token", call{from: local, cookie: session, body: "value=2h&csrf=00"}, 403},
		{"cookie, cross-site", call{from: local, cookie: session, header: map[string]string{"Sec-Fetch-Site": "cross-site"}, body: "value=2h&csrf=" + csrf}, 403},
		{"cookie, same-site but another origin", call{from: local, cookie: session, header: map[string]string{"Sec-Fetch-Site": "same-site"}, body: "value=2h&csrf=" + csrf}, 403},
		{"bearer, foreign Origin", call{from: local, header: map[string]string{"Authorization": "Bearer " + token, "Origin": "http://evil.example"}, body: "value=2h"}, 403},
		{"bad value", call{from: local, header: bearer, body: "value=soon"}, 400},
		{"cookie and CSRF token", call{from: remote, cookie: session, header: map[string]string{"Sec-Fetch-Site": "same-origin"}, body: "value=2h&csrf=" + csrf}, 303},
		{"bearer", call{from: local, header: bearer, body: "value=3h"}, 303},
	}
	for _, c := range cases {
		c.c.method, c.c.path = http.MethodPost, "/ui/actions/settings"
		if got := c.c.do(h); got.Code != c.want {
			t.Errorf("%s: %d, want %d\n%.300s", c.name, got.Code, c.want, got.Body)
		}
	}
	if d, err := l.CleanupRetentionOverride(context.Background()); err != nil || d != 3*time.Hour {
		t.Errorf("override = %v, %v; want the last good edit's 3h", d, err)
	}
	// Without an override, a file that gives no retention is on the built-in default.
	defaulted := mounted(t, ui.Config{Runtime: rt, Ledger: sqliteLedger(t), Cleanup: plan, CleanupDefaulted: true})
	if page := (call{method: http.MethodGet, path: "/ui/settings", from: local}).do(defaulted).Body.String(); !strings.Contains(page, "the built-in default") || !strings.Contains(page, "30m") {
		t.Errorf("a defaulted retention's settings page:\n%.2000s", page)
	}
	if d, err := l.CleanupRetentionOverride(context.Background()); err != nil || d != 3*time.Hour {
		t.Errorf("override = %v, %v; want the last good edit's 3h", d, err)
	}
	runs, err := l.FindRuns(context.Background(), ledger.RunFilter{Name: ledger.NameAdminActions})
	if err != nil || len(runs) != 3 {
		t.Fatalf("recorded actions = %+v, %v; want the bad value and the two edits, nothing refused", runs, err)
	}
	if runs[2].State != ledger.Failed || runs[1].State != ledger.Completed {
		t.Errorf("states %s, %s; want the bad value Failed", runs[2].State, runs[1].State)
	}
	// A trigger of a pass the runtime does not have is a failed action, answered 404.
	if got := (call{method: http.MethodPost, path: "/ui/actions/trigger/nope", from: local, header: bearer}).do(h); got.Code != 404 {
		t.Errorf("trigger of an unknown pass: %d", got.Code)
	}
	if got := (call{method: http.MethodPost, path: "/ui/actions/retry/999", from: local, header: bearer}).do(h); got.Code != 404 {
		t.Errorf("retry of an unknown dead letter: %d", got.Code)
	}
	letter, err := l.AddDeadLetter(context.Background(), "audit-log", "gave up", 0, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []int{303, 409} { // a second retry of one dead letter conflicts
		if got := (call{method: http.MethodPost, path: fmt.Sprintf("/ui/actions/retry/%d", letter), from: local, header: bearer}).do(h); got.Code != want {
			t.Errorf("retry of dead letter %d: %d, want %d\n%.300s", letter, got.Code, want, got.Body)
		}
	}
	noToken := mounted(t, ui.Config{Runtime: rt, Ledger: l, Cleanup: plan})
	if got := (call{method: http.MethodPost, path: "/ui/actions/settings", from: local, body: "value=1h"}).do(noToken); got.Code != 403 {
		t.Errorf("an action on a node without a token: %d, want 403", got.Code)
	}
}

// An embedding service mounting the admin handler under a prefix of its own gets links
// under that prefix; every page has the headers that keep it from loading anything else.
func TestMountedUnderAPrefix(t *testing.T) {
	rt := startedRuntime(t, "audit-log", "github.com/acme/jobs.Patch")
	mux := http.NewServeMux()
	mux.Handle("/ops/", http.StripPrefix("/ops", mounted(t, ui.Config{Runtime: rt, Token: token})))
	rec := call{method: http.MethodGet, path: "/ops/ui/", from: local}.do(mux)
	body := rec.Body.String()
	for _, want := range []string{`href="/ops/ui/static/app.css"`, `src="/ops/ui/static/app.js"`, `href="/ops/ui/passes/audit-log"`, `href="/ops/ui/runs"`} {
		if !strings.Contains(body, want) {
			t.Errorf("no %s in\n%.1500s", want, body)
		}
	}
	if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("CSP %q", csp)
	}
	for _, asset := range []string{"/ops/ui/static/app.js", "/ops/ui/static/app.css"} {
		if got := (call{method: http.MethodGet, path: asset, from: local}).do(mux); got.Code != 200 || got.Body.Len() < 100 {
			t.Errorf("%s: %d, %d bytes", asset, got.Code, got.Body.Len())
		}
	}
	if got := (call{method: http.MethodGet, path: "/ops/ui", from: local}).do(mux); got.Code != http.StatusMovedPermanently {
		t.Errorf("/ops/ui: %d, want a redirect to the slash", got.Code)
	}
	// A pass named after a Go type has slashes: its page and its trigger still route.
	slashed := "/ops/ui/passes/" + url.PathEscape("github.com/acme/jobs.Patch")
	if !strings.Contains(body, `href="`+slashed+`"`) {
		t.Errorf("no link to %s", slashed)
	}
	page := call{method: http.MethodGet, path: slashed, from: local}.do(mux)
	if page.Code != 200 || !strings.Contains(page.Body.String(), `href="/ops/ui/static/app.css"`) {
		t.Errorf("%s: %d\n%.800s", slashed, page.Code, page.Body)
	}
	trig := call{method: http.MethodPost, path: "/ops/ui/actions/trigger/" + url.PathEscape("github.com/acme/jobs.Patch"), from: local, header: map[string]string{"Authorization": "Bearer " + token}}.do(mux)
	if trig.Code != http.StatusSeeOther {
		t.Errorf("trigger of the slashed pass: %d\n%.300s", trig.Code, trig.Body)
	}
	frag := call{method: http.MethodGet, path: "/ops/ui/?fragment=1", from: local}.do(mux).Body.String()
	if strings.Contains(frag, "<html") || !strings.Contains(frag, `id="passes"`) {
		t.Errorf("the fragment is not the live block alone:\n%.500s", frag)
	}
}

var olderLink = regexp.MustCompile(`id="older" href="([^"]+)"`)

// The runs page pages back 50 runs at a time until the oldest, and says which filter it
// could not read instead of ignoring it.
func TestRunsPagePagesBack(t *testing.T) {
	rt := startedRuntime(t, "audit-log")
	l := sqliteLedger(t)
	ctx := context.Background()
	start := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for i := range 60 {
		at := start.Add(time.Duration(i) * time.Minute)
		id, err := l.StartRun(ctx, "audit-log", at, at, nil)
		if err == nil {
			err = l.FinishRun(ctx, id, ledger.Finish{End: at.Add(time.Second), State: ledger.Completed, RowsDeleted: int64(i)})
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	h := mounted(t, ui.Config{Runtime: rt, Ledger: l})
	rows := regexp.MustCompile(`<tr class="run `)
	first := call{method: http.MethodGet, path: "/ui/runs?pass=audit-log", from: local}.do(h).Body.String()
	m := olderLink.FindStringSubmatch(first)
	if n := len(rows.FindAllString(first, -1)); n != 50 || m == nil {
		t.Fatalf("first page: %d runs, older link %v", n, m)
	}
	second := call{method: http.MethodGet, path: strings.ReplaceAll(m[1], "&amp;", "&"), from: local}.do(h).Body.String()
	if n := len(rows.FindAllString(second, -1)); n != 10 || olderLink.MatchString(second) {
		t.Errorf("second page: %d runs (want the 10 oldest), older link %v", n, olderLink.FindStringSubmatch(second))
	}
	if !strings.Contains(second, `data-run="1"`) || strings.Contains(second, `data-run="11"`) {
		t.Errorf("the second page is not runs 1-10")
	}
	bad := call{method: http.MethodGet, path: "/ui/runs?since=yesterday", from: local}.do(h).Body.String()
	if !strings.Contains(bad, `since: &#34;yesterday&#34; is not a time`) {
		t.Errorf("a bad since is not reported:\n%.1500s", bad)
	}
}
