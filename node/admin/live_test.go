package admin

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/retentionkit/retention/passes/dbtest"
	"github.com/retentionkit/retention/passes/ledger"
)

// The live-control routes store what they are asked in the ledger (a real SQLite one),
// after the same checks as the commands, and only with the token.
func TestLiveControlRoutes(t *testing.T) {
	ctx := context.Background()
	db := dbtest.SQLite(t)
	if _, err := ledger.Migrate(ctx, db, "adm_"); err != nil {
		t.Fatal(err)
	}
	l, err := ledger.New(db, "adm_")
	if err != nil {
		t.Fatal(err)
	}
	rt := noopRuntime(t)
	if err := rt.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Stop(context.Background()) })
	h := New(Config{Runtime: rt, Ledger: l, Token: "s3cret"})
	do := func(method, path, token string) (int, string) {
		req := httptest.NewRequest(method, path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code, rec.Body.String()
	}
	stored := func() map[string]string {
		all, err := l.Settings(ctx, ledger.PassSettingPrefix)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, s := range all {
			out[s.Key] = s.Value
		}
		return out
	}
	cases := []struct {
		method, path, token string
		code                int
		body                string
	}{
		{"POST", "/passes/noop/pause", "", http.StatusUnauthorized, "unauthorized"},
		{"POST", "/passes/noop/pause", "wrong", http.StatusUnauthorized, "unauthorized"},
		{"POST", "/settings/pass.noop.batch_size?value=0", "s3cret", http.StatusBadRequest, `batch_size must be at least 1, got 0`},
		{"POST", "/settings/pass.other.batch_size?value=5", "s3cret", http.StatusNotFound, `no pass "other"`},
		{"POST", "/settings/pass.noop.retention_period?value=1h", "s3cret", http.StatusNotFound, `not a live setting`},
		{"POST", "/passes/other/pause", "s3cret", http.StatusNotFound, `no pass "other"`},
	}
	for _, c := range cases {
		if code, body := do(c.method, c.path, c.token); code != c.code || !strings.Contains(body, c.body) {
			t.Errorf("%s %s = %d %q, want %d %q", c.method, c.path, code, body, c.code, c.body)
		}
	}
	if got := stored(); len(got) != 0 {
		t.Fatalf("refused requests stored %v", got)
	}
	for _, path := range []string{"/settings/pass.noop.batch_size?value=250", "/settings/pass.noop.batch_delay?value=1s", "/passes/noop/pause"} {
		if code, body := do("POST", path, "s3cret"); code != http.StatusAccepted {
			t.Fatalf("POST %s = %d %s", path, code, body)
		}
	}
	want := map[string]string{"pass.noop.batch_size": "250", "pass.noop.batch_delay": "1s", "pass.noop.paused": "true"}
	if got := stored(); len(got) != 3 || got["pass.noop.batch_size"] != want["pass.noop.batch_size"] ||
		got["pass.noop.batch_delay"] != want["pass.noop.batch_delay"] || got["pass.noop.paused"] != "true" {
		t.Fatalf("stored %v, want %v", got, want)
	}
	if code, _ := do("POST", "/passes/noop/resume", "s3cret"); code != http.StatusAccepted {
		t.Fatalf("resume = %d", code)
	}
	if code, _ := do("DELETE", "/settings/pass.noop.batch_size", "s3cret"); code != http.StatusAccepted {
		t.Fatalf("unset = %d", code)
	}
	if got := stored(); len(got) != 1 || got["pass.noop.batch_delay"] != "1s" {
		t.Fatalf("after resume and unset %v", got)
	}
}
