package ui_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/retentionkit/retention/core/clock"
	"github.com/retentionkit/retention/node/ui"
	"github.com/retentionkit/retention/passes/dbtest"
	"github.com/retentionkit/retention/passes/ledger"
)

// Five wrong tokens from one address within a minute shut that address out of the
// login for the rest of the minute, the right token included; another address is not
// affected, and the minute's end lets the first in again. On a manual clock.
func TestLoginRateLimit(t *testing.T) {
	clk := clock.NewManual(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	h := mounted(t, ui.Config{Runtime: startedRuntime(t, "audit-log"), Token: token, Clock: clk})
	try := func(from, tok string) *httptest.ResponseRecorder {
		return call{method: http.MethodPost, path: "/ui/login", from: from, body: "token=" + tok}.do(h)
	}
	for i := range 5 {
		clk.Advance(5 * time.Second)
		if got := try("203.0.113.7:4000"+fmt.Sprint(i), "wrong"); got.Code != http.StatusUnauthorized {
			t.Fatalf("wrong token %d: %d, want 401", i+1, got.Code)
		}
	}
	got := try("203.0.113.7:5000", token)
	if got.Code != http.StatusTooManyRequests || got.Header().Get("Retry-After") != "40" || len(got.Result().Cookies()) != 0 {
		t.Fatalf("the right token after 5 wrong ones: %d, Retry-After %q, cookies %v; want 429, 40s left of the minute (the first failure was 20s ago), no session",
			got.Code, got.Header().Get("Retry-After"), got.Result().Cookies())
	}
	if !strings.Contains(got.Body.String(), "try again in 40s") {
		t.Errorf("the refusal does not say when to try again:\n%.1500s", got.Body)
	}
	if got := try("198.51.100.9:4000", token); got.Code != http.StatusSeeOther {
		t.Errorf("another address with the right token: %d, want 303", got.Code)
	}
	clk.Advance(39 * time.Second)
	if got := try("203.0.113.7:5001", token); got.Code != http.StatusTooManyRequests {
		t.Errorf("a second before the minute ends: %d, want 429", got.Code)
	}
	clk.Advance(time.Second)
	if got := try("203.0.113.7:5002", token); got.Code != http.StatusSeeOther {
		t.Errorf("after the minute: %d, want 303", got.Code)
	}
	// A login that worked forgets the failures before it.
	for range 4 {
		try("203.0.113.7:6000", "wrong")
	}
	try("203.0.113.7:6000", token)
	for range 4 {
		try("203.0.113.7:6000", "wrong")
	}
	if got := try("203.0.113.7:6000", token); got.Code != http.StatusSeeOther {
		t.Errorf("4 wrong, right, 4 wrong, right: %d, want 303", got.Code)
	}
}

// quarantineLedger is a SQLite ledger with n quarantined rows of audit-log and m dead
// letters.
func quarantineLedger(t *testing.T, n, m int) *ledger.Ledger {
	t.Helper()
	db := dbtest.SQLite(t)
	ctx := context.Background()
	if _, err := ledger.Migrate(ctx, db, "r_"); err != nil {
		t.Fatal(err)
	}
	l, err := ledger.New(db, "r_")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		if _, err := db.ExecContext(ctx, "INSERT INTO r_quarantine (pass_name, row_key, error, first_seen, last_seen, attempts, next_attempt) VALUES (?, ?, ?, ?, ?, 1, ?)",
			"audit-log", fmt.Sprintf("[%d]", i+1), "FOREIGN KEY constraint failed", at.Add(time.Duration(i)*time.Second), at, at.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range m {
		if _, err := l.AddDeadLetter(ctx, "audit-log", fmt.Sprintf("gave up %d", i+1), 0, at.Add(time.Duration(i)*time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	return l
}

var (
	quarantineRow = regexp.MustCompile(`<tr data-pass="audit-log" data-key="`)
	letterRow     = regexp.MustCompile(`<tr data-id="`)
	nextLink      = regexp.MustCompile(`id="(rows|letters)-pager">[^<]*(?:<a class="prev" href="[^"]*">previous</a>)?[^<]*<a class="next" href="([^"]+)"`)
)

// The quarantine and the dead letters are paged 50 at a time, each on its own, and the
// headings count them all: 120 rows and 60 letters are pages of 50, 50, 20 and 50, 10.
func TestQuarantinePaging(t *testing.T) {
	h := mounted(t, ui.Config{Runtime: startedRuntime(t, "audit-log"), Ledger: quarantineLedger(t, 120, 60)})
	get := func(path string) string {
		rec := call{method: http.MethodGet, path: path, from: local}.do(h)
		if rec.Code != 200 {
			t.Fatalf("%s: %d %.500s", path, rec.Code, rec.Body)
		}
		return rec.Body.String()
	}
	next := func(page, table string) string {
		for _, m := range nextLink.FindAllStringSubmatch(page, -1) {
			if m[1] == table {
				return strings.ReplaceAll(m[2], "&amp;", "&")
			}
		}
		return ""
	}
	page := get("/ui/quarantine")
	if !strings.Contains(page, "Quarantined rows <small>120</small>") || !strings.Contains(page, "Dead letters <small>60</small>") {
		t.Errorf("the headings do not count every row and letter:\n%.3000s", page)
	}
	var rows, letters []int
	for path := "/ui/quarantine"; path != ""; path = next(get(path), "rows") {
		rows = append(rows, len(quarantineRow.FindAllString(get(path), -1)))
	}
	for path := "/ui/quarantine"; path != ""; path = next(get(path), "letters") {
		letters = append(letters, len(letterRow.FindAllString(get(path), -1)))
	}
	if fmt.Sprint(rows) != "[50 50 20]" || fmt.Sprint(letters) != "[50 10]" {
		t.Errorf("pages of rows %v, of letters %v; want [50 50 20] and [50 10]", rows, letters)
	}
	last := get("/ui/quarantine?rows=100&letters=50")
	if !strings.Contains(last, `data-key="[120]"`) || !strings.Contains(last, "gave up 1<") || !strings.Contains(last, "rows 101-120 of 120") {
		t.Errorf("the last pages lack the last row or the oldest letter:\n%.4000s", last)
	}
}

// The settings page clears the runtime overrides: the cleanup's retention (the ledger
// holds none after, the page says the file's value is in effect again, clearing when
// there is none is a conflict) and a pass's live setting; every clear is recorded.
func TestSettingsPageClearsTheOverride(t *testing.T) {
	l := quarantineLedger(t, 0, 0)
	plan, _ := ledger.CleanupConfig{}.Build()
	h := mounted(t, ui.Config{Runtime: startedRuntime(t, "audit-log"), Ledger: l, Token: token, Cleanup: plan})
	bearer := map[string]string{"Authorization": "Bearer " + token}
	if got := (call{method: http.MethodPost, path: "/ui/actions/settings", from: local, header: bearer, body: "value=2h"}).do(h); got.Code != 303 {
		t.Fatalf("set: %d %.300s", got.Code, got.Body)
	}
	session := login(t, h)
	page := call{method: http.MethodGet, path: "/ui/settings", from: local, cookie: session}.do(h).Body.String()
	if !strings.Contains(page, `id="clear-override"`) {
		t.Fatalf("no button to clear the override:\n%.3000s", page)
	}
	csrf := csrfField.FindStringSubmatch(page)[1]
	got := call{method: http.MethodPost, path: "/ui/actions/settings/clear", from: local, cookie: session, header: map[string]string{"Sec-Fetch-Site": "same-origin"}, body: "csrf=" + csrf + "&back=/ui/settings"}.do(h)
	if got.Code != 303 {
		t.Fatalf("clear: %d %.500s", got.Code, got.Body)
	}
	if d, err := l.CleanupRetentionOverride(context.Background()); err != nil || d != 0 {
		t.Errorf("override after clearing = %v, %v; want none", d, err)
	}
	page = call{method: http.MethodGet, path: "/ui/settings", from: local, cookie: session}.do(h).Body.String()
	if !strings.Contains(page, "the built-in default") && !strings.Contains(page, "the configuration file") || strings.Contains(page, "runtime override") || strings.Contains(page, `id="clear-override"`) {
		t.Errorf("after clearing the page still shows the override:\n%.3000s", page)
	}
	if got := (call{method: http.MethodPost, path: "/ui/actions/settings/clear", from: local, header: bearer}).do(h); got.Code != http.StatusConflict {
		t.Errorf("clearing with no override: %d, want 409", got.Code)
	}
	if got := (call{method: http.MethodPost, path: "/ui/actions/settings/clear", from: local}).do(h); got.Code != http.StatusUnauthorized {
		t.Errorf("clearing without the token: %d, want 401", got.Code)
	}
	// A pass's live override (settings set pass.NAME.FIELD) is listed and cleared too.
	live := ledger.PassSettingKey("audit-log", "batch_size")
	if err := l.SetSetting(context.Background(), live, "50", time.Now()); err != nil {
		t.Fatal(err)
	}
	page = call{method: http.MethodGet, path: "/ui/settings", from: local, cookie: session}.do(h).Body.String()
	if !strings.Contains(page, `<tr data-key="pass.audit-log.batch_size"><td><code>pass.audit-log.batch_size</code></td><td>50</td>`) || !strings.Contains(page, `name="key" value="pass.audit-log.batch_size"`) {
		t.Fatalf("the live override is not listed with a Clear button:\n%.4000s", page)
	}
	if got := (call{method: http.MethodPost, path: "/ui/actions/settings/clear", from: local, header: bearer, body: "key=database.dsn"}).do(h); got.Code != http.StatusBadRequest {
		t.Errorf("clearing a key that is no runtime setting: %d, want 400", got.Code)
	}
	got = call{method: http.MethodPost, path: "/ui/actions/settings/clear", from: local, cookie: session, header: map[string]string{"Sec-Fetch-Site": "same-origin"}, body: "csrf=" + csrf + "&key=" + live}.do(h)
	if got.Code != 303 {
		t.Fatalf("clear %s: %d %.500s", live, got.Code, got.Body)
	}
	if left, err := l.Settings(context.Background(), ledger.PassSettingPrefix); err != nil || len(left) != 0 {
		t.Errorf("live settings after clearing = %+v, %v; want none", left, err)
	}
	runs, _ := l.FindRuns(context.Background(), ledger.RunFilter{Name: ledger.NameAdminActions})
	if len(runs) != 5 || *runs[0].StopReason != "settings" || runs[0].State != ledger.Completed {
		t.Errorf("recorded actions %+v; want the set, the clear, the failed clear, the refused key and the live clear", runs)
	}
}

// Without node.admin_token no login can work: the header says the dashboard is
// read-only and why, and offers no login; with a token the login link explains itself.
func TestNoTokenIsExplained(t *testing.T) {
	rt := startedRuntime(t, "audit-log")
	plan, _ := ledger.CleanupConfig{}.Build()
	noToken := mounted(t, ui.Config{Runtime: rt, Ledger: quarantineLedger(t, 0, 0), Cleanup: plan})
	for _, path := range []string{"/ui/", "/ui/settings", "/ui/quarantine"} {
		page := call{method: http.MethodGet, path: path, from: local}.do(noToken).Body.String()
		if strings.Contains(page, "Log in to act") || !strings.Contains(page, "read-only: no admin token configured") {
			t.Errorf("%s without a token offers a login, or does not say it is read-only:\n%.1500s", path, page)
		}
	}
	if page := (call{method: http.MethodGet, path: "/ui/settings", from: local}).do(noToken).Body.String(); !strings.Contains(page, `id="no-token"`) {
		t.Errorf("the settings page without a token does not say why it cannot edit:\n%.3000s", page)
	}
	withToken := mounted(t, ui.Config{Runtime: rt, Token: token})
	if page := (call{method: http.MethodGet, path: "/ui/", from: local}).do(withToken).Body.String(); !strings.Contains(page, "Log in to act") || strings.Contains(page, "read-only") {
		t.Errorf("with a token the header should offer the login:\n%.1500s", page)
	}
}

// The pass page's charts in a real browser: a labelled y-axis with round values, the
// figures printed under each chart, and a runs table whose empty error cells are not
// red while a failed run's error is.
func TestPassChartsInBrowser(t *testing.T) {
	ctx := browser(t)
	l := quarantineLedger(t, 0, 0)
	bg := context.Background()
	start := time.Now().Add(-time.Hour)
	for i, rows := range []int64{1200, 3400, 0, 800} {
		at := start.Add(time.Duration(i) * time.Minute)
		id, err := l.StartRun(bg, "audit-log", at, at, nil)
		if err != nil {
			t.Fatal(err)
		}
		f := ledger.Finish{End: at.Add(time.Second), State: ledger.Completed, RowsDeleted: rows, Batches: 1}
		if rows == 0 {
			msg := "database is locked"
			f.State, f.Error = ledger.Failed, msg
		}
		if err := l.FinishRun(bg, id, f); err != nil {
			t.Fatal(err)
		}
		if err := l.RecordBacklog(bg, at.Add(time.Second), map[string]ledger.BacklogSample{"audit-log": {Rows: 9000 - 2000*int64(i), Held: 2}}); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(mounted(t, ui.Config{Runtime: startedRuntime(t, "audit-log"), Ledger: l, Refresh: 200 * time.Millisecond}))
	t.Cleanup(srv.Close)
	do(t, ctx, chromedp.Navigate(srv.URL+"/ui/passes/audit-log"), chromedp.WaitVisible(chromedp.CSS("#backlog-chart")))
	screenshot(t, ctx, "pass-charts")
	for _, c := range []struct{ chart, label, ticks, figures string }{
		{"#sweeps-chart", "rows deleted", "0|2,500|5,000", "last sweep: 800 rows|largest: 3,400 rows|total: 5,400 rows in 4 sweeps|failed: 1"},
		{"#backlog-chart", "rows", "0|5,000|10,000", "now: 3,000 deletable, 2 held|highest: 9,000 deletable|lowest: 3,000 deletable|samples: 4"},
	} {
		label := eval[string](t, ctx, `document.querySelector('`+c.chart+` text.ylabel').textContent`)
		ticks := eval[[]string](t, ctx, `Array.from(document.querySelectorAll('`+c.chart+` text.tick')).map(e => e.textContent)`)
		// The figures as the reader sees them: visible text, not tooltips.
		figures := eval[[]string](t, ctx, `Array.from(document.querySelectorAll('`+c.chart+` dl.figures dt')).map(dt => dt.innerText.replace(/:$/, '') + ": " + dt.nextElementSibling.innerText)`)
		if label != c.label || strings.Join(ticks, "|") != c.ticks || strings.Join(figures, "|") != c.figures {
			t.Errorf("%s: y-axis %q, ticks %v, figures %v; want %q, %s, %s", c.chart, label, ticks, figures, c.label, c.ticks, c.figures)
		}
		if visible := eval[bool](t, ctx, `(function(){ const r = document.querySelector('`+c.chart+` dl.figures').getBoundingClientRect(); return r.width > 0 && r.height > 0; })()`); !visible {
			t.Errorf("%s: the figures are not visible", c.chart)
		}
	}
	// The folded values, once opened, stay open when the page refreshes its live block.
	// Clicked in the page, in one step: the live block refreshes every 200ms, and a
	// click by node id can find its node replaced in between (CI once failed with "Could
	// not find node with given id").
	if !eval[bool](t, ctx, `(function(){ const s = document.querySelector('#sweeps-values summary'); if (!s) return false; s.click(); return true; })()`) {
		t.Fatal("no #sweeps-values summary to open")
	}
	generation := eval[int](t, ctx, `Number(document.getElementById('live').dataset.generation)`)
	waitFor(t, ctx, "a refresh of the live block", fmt.Sprintf(`Number(document.getElementById('live').dataset.generation) > %d`, generation))
	if !eval[bool](t, ctx, `document.getElementById('sweeps-values').open && document.querySelectorAll('#sweeps-values li').length === 4`) {
		t.Error("the opened values closed on refresh, or do not list the 4 sweeps")
	}
	colours := eval[map[string]string](t, ctx, `(function(){
	  const o = {};
	  document.querySelectorAll('table.runs tr.run').forEach(tr => { o[tr.children[2].textContent] = getComputedStyle(tr.querySelector('td[data-k="error"]')).color; });
	  return o; })()`)
	red := "rgb(192, 57, 43)"
	if colours["Failed"] != red || colours["Completed"] == red || colours["Completed"] == "" {
		t.Errorf("error cell colours by state %v; want a failed run's error red and an empty one not", colours)
	}
}

// In a real browser: the quarantine's "next" link pages on, the settings page's "Clear
// the override" clears it, and after five wrong tokens even the right one is told to
// wait.
func TestPagingClearingAndLoginLimitInBrowser(t *testing.T) {
	ctx := browser(t)
	l := quarantineLedger(t, 70, 3)
	if err := l.SetCleanupRetention(context.Background(), 2*time.Hour, time.Now()); err != nil {
		t.Fatal(err)
	}
	plan, _ := ledger.CleanupConfig{}.Build()
	srv := httptest.NewServer(mounted(t, ui.Config{Runtime: startedRuntime(t, "audit-log"), Ledger: l, Token: token, Cleanup: plan}))
	t.Cleanup(srv.Close)
	base := srv.URL + "/ui/"

	do(t, ctx, chromedp.Navigate(base+"quarantine"), chromedp.WaitVisible(chromedp.CSS("#rows-pager")))
	if n := eval[int](t, ctx, `document.querySelectorAll('#quarantine tbody tr[data-key]').length`); n != 50 {
		t.Errorf("first page: %d rows, want 50", n)
	}
	do(t, ctx, chromedp.Click(chromedp.CSS("#rows-pager a.next")), chromedp.WaitVisible(chromedp.CSS("#rows-pager a.prev")))
	waitFor(t, ctx, "the second page", `location.search.includes('rows=50') && document.querySelectorAll('#quarantine tbody tr[data-key]').length === 20`)
	if got := eval[string](t, ctx, `document.getElementById('rows-pager').innerText`); !strings.Contains(got, "51-70 of 70") {
		t.Errorf("pager = %q", got)
	}

	do(t, ctx, chromedp.Navigate(base+"login"), chromedp.WaitVisible(chromedp.CSS("#token")),
		chromedp.SendKeys(chromedp.CSS("#token"), token), chromedp.Click(chromedp.CSS("#login-submit")), chromedp.WaitVisible(chromedp.CSS("#logout")))
	do(t, ctx, chromedp.Navigate(base+"settings"), chromedp.WaitVisible(chromedp.CSS("#clear-override")))
	do(t, ctx, chromedp.Click(chromedp.CSS("#clear-override")), chromedp.WaitVisible(chromedp.CSS("#note")))
	if d, err := l.CleanupRetentionOverride(context.Background()); err != nil || d != 0 {
		t.Errorf("override after the click = %v, %v; want none", d, err)
	}
	if src := eval[string](t, ctx, `document.querySelector('#retention dd[data-k="source"]').innerText`); strings.Contains(src, "override") {
		t.Errorf("source after clearing = %q", src)
	}

	do(t, ctx, chromedp.Click(chromedp.CSS("#logout")), chromedp.WaitVisible(chromedp.CSS("#login")))
	for range 5 {
		do(t, ctx, chromedp.Navigate(base+"login"), chromedp.WaitVisible(chromedp.CSS("#token")),
			chromedp.SendKeys(chromedp.CSS("#token"), "wrong"), chromedp.Click(chromedp.CSS("#login-submit")), chromedp.WaitVisible(chromedp.CSS("#login-failed")))
	}
	do(t, ctx, chromedp.SendKeys(chromedp.CSS("#token"), token), chromedp.Click(chromedp.CSS("#login-submit")), chromedp.WaitVisible(chromedp.CSS("#login-limited")))
	if got := eval[string](t, ctx, `document.getElementById('login-limited').innerText`); !strings.Contains(got, "try again in") {
		t.Errorf("limited login says %q", got)
	}
	if eval[bool](t, ctx, `document.getElementById('logout') !== null`) {
		t.Error("the right token was let in during the limit")
	}
}
