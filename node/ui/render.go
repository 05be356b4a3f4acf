package ui

import (
	"bytes"
	"context"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"strings"
	"time"
)

// pages are the parsed templates, one set per page: the layout and partials cloned with
// the page's own file, whose "live" block is also what a refresh fetches alone.
type pages struct {
	byName map[string]*template.Template
}

func parsePages() (*pages, error) {
	base, err := template.New("").Funcs(funcs()).ParseFS(assets, "assets/templates/_*.html")
	if err != nil {
		return nil, fmt.Errorf("ui: parse the layout: %w", err)
	}
	files, err := fs.Glob(assets, "assets/templates/[a-z]*.html")
	if err != nil {
		return nil, err
	}
	p := &pages{byName: map[string]*template.Template{}}
	for _, f := range files {
		t, err := template.Must(base.Clone()).ParseFS(assets, f)
		if err != nil {
			return nil, fmt.Errorf("ui: parse %s: %w", f, err)
		}
		name := strings.TrimSuffix(f[strings.LastIndexByte(f, '/')+1:], ".html")
		p.byName[name] = t
	}
	return p, nil
}

// view is what every template gets: the request's place and rights, the page's
// problems, and the page's own data in Data.
type view struct {
	Page   string
	Title  string
	Base   string
	Authed bool
	// TokenSet says the node has an admin token: without one no action is possible, so
	// the header says the dashboard is read-only instead of offering a login.
	TokenSet bool
	CSRF     string
	Refresh  int64 // milliseconds
	Note     string
	Errors   []string
	Data     any
	Now      time.Time
}

// problems collects what a page could not read, to show instead of failing.
type problems struct{ list []string }

func (p *problems) add(what string, err error, redact func(string) string) {
	switch {
	case err == nil:
	case what == "":
		p.list = append(p.list, redact(err.Error()))
	default:
		p.list = append(p.list, what+": "+redact(err.Error()))
	}
}

func (h *Handler) newRequest(r *http.Request) *request {
	ok, _ := h.authed(r)
	req := &request{Request: r, ctx: r.Context(), base: basePath(r), authed: ok}
	if ok {
		req.csrf = h.derive("csrf")
	}
	return req
}

// reader serves a page to those who may read it: the whole page, or only its live
// block when the refresh script asks (?fragment=1).
func (h *Handler) reader(build func(*request) (string, any)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !h.mayRead(r) {
			if h.cfg.Token == "" {
				http.Error(w, "reading the dashboard from another host needs node.admin_token, and none is configured", http.StatusForbidden)
				return
			}
			h.render(w, r, http.StatusUnauthorized, "login", h.newRequest(r), loginView{Next: safeNext(r.RequestURI, basePath(r))})
			return
		}
		req := h.newRequest(r)
		ctx, cancel := context.WithTimeout(r.Context(), h.cfg.Timeout)
		defer cancel()
		req.ctx = ctx
		page, data := build(req)
		if page == "" {
			http.NotFound(w, r)
			return
		}
		h.render(w, r, http.StatusOK, page, req, data)
	})
}

// title names a page in the window title.
func title(page string) string {
	switch page {
	case "passes":
		return "Passes"
	case "pass":
		return "Pass"
	case "runs":
		return "Runs"
	case "quarantine":
		return "Quarantine and dead letters"
	case "settings":
		return "Settings"
	case "cluster":
		return "Cluster"
	case "login":
		return "Log in"
	}
	return "Refused"
}

func (h *Handler) render(w http.ResponseWriter, r *http.Request, code int, page string, req *request, data any) {
	t, ok := h.pages.byName[page]
	if !ok {
		http.Error(w, "no page "+page, http.StatusInternalServerError)
		return
	}
	v := view{Page: page, Title: title(page), Base: req.base, Authed: req.authed, TokenSet: h.cfg.Token != "", CSRF: req.csrf,
		Refresh: h.cfg.Refresh.Milliseconds(), Note: r.URL.Query().Get("note"), Data: data, Now: time.Now()}
	if e, ok := data.(interface{ problems() []string }); ok {
		v.Errors = e.problems()
	}
	block := "page"
	if r.URL.Query().Get("fragment") == "1" {
		block = "live"
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, block, v); err != nil {
		http.Error(w, "render "+page+": "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_, _ = w.Write(buf.Bytes())
}
