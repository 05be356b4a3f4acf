// Package ui is the node's web dashboard: the passes with their backlog, each pass's
// history, the run ledger, the quarantine and dead letters, the cleanup's settings and
// the cluster, served as server-rendered pages (html/template) with a small embedded
// script that refreshes them in place. Everything it serves is embedded in the binary.
//
// The admin handler mounts it under /ui/ (admin.Config.UI); a service embedding the
// runtime mounts the same handler next to its admin routes. Reading follows the
// loopback rule (Config.ReadNeedsToken) and every action needs the admin token, is
// checked against cross-site requests and is recorded in the ledger (docs/ui.md).
package ui

import (
	"context"
	"embed"
	"io/fs"
	"net/http"
	"strings"
	"time"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/core/clock"
	"github.com/retentionkit/retention/node/admin"
	"github.com/retentionkit/retention/node/metrics"
	"github.com/retentionkit/retention/passes/ledger"
)

//go:embed all:assets
var assets embed.FS

// BacklogSource is the backlog measurement the passes page shows: the node's
// metrics.BacklogCollector, so the page and /metrics show the same numbers.
type BacklogSource interface {
	Backlog() ([]metrics.Backlog, time.Time)
}

// Config is what the dashboard shows and acts on. Only Runtime is required.
type Config struct {
	Runtime *actors.Runtime
	// Ledger backs the runs, quarantine, dead letters, settings and charts, and records
	// every action; nil shows those pages as "the ledger is off" and allows only triggers.
	Ledger *ledger.Ledger
	// Token is node.admin_token: it unlocks the actions and, away from loopback, reading.
	// Empty refuses every action and every read from a non-loopback address.
	Token string
	// ReadNeedsToken makes reading need the token from loopback too: set it behind a
	// reverse proxy on the same host, where every request comes from loopback.
	ReadNeedsToken bool
	// ReadyAfterFailures is the failed sweeps in a row that make a pass degraded, the
	// same threshold /readyz is given, so the page's "degraded" is the probe's verdict.
	ReadyAfterFailures int
	// Backlog is the backlog measurement; nil shows no backlog.
	Backlog BacklogSource
	// Cluster is cluster mode's view (admin.Config.Cluster); nil shows "cluster mode is off".
	Cluster admin.ClusterSource
	// Cleanup is the metadata cleanup's configuration as the file gives it; nil: the
	// cleanup is off.
	Cleanup *ledger.Plan
	// CleanupDefaulted says the file gives no metadata_cleanup.retention_period, so the
	// settings page calls Cleanup's retention the built-in default, not the file's.
	CleanupDefaulted bool
	// Redact masks secrets (a DSN's password) in the error texts pages show; nil shows
	// them as they are.
	Redact func(string) string
	// Refresh is how often pages refresh themselves (default 5s).
	Refresh time.Duration
	// Timeout bounds the queries one page makes (default 5s), so a database that does
	// not answer shows its error instead of a page that never loads.
	Timeout time.Duration
	// Clock times the login's rate limit; nil is the wall clock (a test passes a
	// clock.Manual).
	Clock clock.Clock
}

// Handler serves the dashboard. Mount it with http.StripPrefix: links are built from
// the path the browser asked for, so any mount point works.
type Handler struct {
	cfg    Config
	mux    *http.ServeMux
	pages  *pages
	static http.Handler
	cross  *http.CrossOriginProtection
	logins *loginLimiter
}

// New returns the dashboard for cfg.
func New(cfg Config) (*Handler, error) {
	if cfg.Refresh <= 0 {
		cfg.Refresh = 5 * time.Second
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 5 * time.Second
	}
	if cfg.Redact == nil {
		cfg.Redact = func(s string) string { return s }
	}
	p, err := parsePages()
	if err != nil {
		return nil, err
	}
	static, _ := fs.Sub(assets, "assets/static")
	h := &Handler{cfg: cfg, mux: http.NewServeMux(), pages: p, static: http.FileServerFS(static), cross: http.NewCrossOriginProtection(), logins: newLoginLimiter(cfg.Clock)}
	h.routes()
	return h, nil
}

func (h *Handler) routes() {
	read := func(pattern string, f func(*request) (string, any)) {
		h.mux.Handle("GET "+pattern, h.reader(f))
	}
	read("/{$}", h.passesPage)
	read("/passes/{name}", h.passPage)
	read("/runs", h.runsPage)
	read("/quarantine", h.quarantinePage)
	read("/settings", h.settingsPage)
	read("/cluster", h.clusterPage)
	h.mux.Handle("GET /static/", http.StripPrefix("/static", h.static))
	h.mux.HandleFunc("GET /login", h.loginPage)
	h.mux.Handle("POST /login", h.cross.Handler(http.HandlerFunc(h.login)))
	h.mux.Handle("POST /logout", h.cross.Handler(http.HandlerFunc(h.logout)))
	h.mux.Handle("POST /actions/trigger/{name}", h.action("trigger", h.trigger))
	h.mux.Handle("POST /actions/retry/{id}", h.action("retry", h.retry))
	h.mux.Handle("POST /actions/release", h.action("release", h.release))
	h.mux.Handle("POST /actions/settings", h.action("settings", h.setting))
	h.mux.Handle("POST /actions/settings/clear", h.action("settings", h.clearSetting))
}

// ServeHTTP serves a dashboard request with headers that keep the pages from loading
// anything but their own embedded assets or being framed by another site.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'; base-uri 'none'")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "same-origin")
	h.mux.ServeHTTP(w, r)
}

// request is one page request: what the page builders need besides the config.
type request struct {
	*http.Request
	ctx    context.Context
	base   string // the dashboard's path as the browser sees it, ending in "/"
	authed bool   // holds the admin token: the page shows the actions
	csrf   string // the form token, when authed
}

// basePath is the mount point as the browser sees it: the requested path less the
// path left after the mount's prefix was stripped.
// Both are compared escaped, so a pass name with a slash (%2F) in the path cuts right.
func basePath(r *http.Request) string {
	rest := r.URL.EscapedPath()
	full := rest
	if u := r.RequestURI; u != "" && u != "*" {
		full, _, _ = strings.Cut(u, "?")
	}
	base := strings.TrimSuffix(full, rest)
	return strings.TrimSuffix(base, "/") + "/"
}
