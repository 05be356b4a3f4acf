package ui

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// The session cookie carries a value derived from the admin token rather than the token
// itself, so a leaked cookie is not the token the API accepts; changing the token ends
// every session.
const (
	sessionCookie = "retention_ui"
	sessionHours  = 8
)

// derive is HMAC-SHA256 of purpose under the admin token, in hex.
func (h *Handler) derive(purpose string) string {
	m := hmac.New(sha256.New, []byte(h.cfg.Token))
	m.Write([]byte("retention-ui/" + purpose))
	return hex.EncodeToString(m.Sum(nil))
}

func equal(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

// authed reports whether r holds the admin token, as the session cookie or as the API's
// bearer header; how says which, since only a cookie needs the CSRF token on a form.
func (h *Handler) authed(r *http.Request) (ok bool, how string) {
	if h.cfg.Token == "" {
		return false, ""
	}
	if got, found := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); found && equal(got, h.cfg.Token) {
		return true, "bearer"
	}
	if c, err := r.Cookie(sessionCookie); err == nil && equal(c.Value, h.derive("session")) {
		return true, "cookie"
	}
	return false, ""
}

// clientAddr is the request's address without its port: the login's rate limit counts
// per address, whichever port a retry comes from.
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// loopback reports whether the request came from this host.
func loopback(r *http.Request) bool {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.Unmap().IsLoopback()
}

// mayRead is the read rule: anyone on loopback, the token holder anywhere.
func (h *Handler) mayRead(r *http.Request) bool {
	if ok, _ := h.authed(r); ok {
		return true
	}
	return loopback(r) && !h.cfg.ReadNeedsToken
}

// errRefused is an action or read turned away, with the status and the reason shown.
type errRefused struct {
	code   int
	reason string
}

// mayAct is the action rule: the token, and with a cookie the form's CSRF token too
// (the cross-origin check has run before; the CSRF token is the second line for a
// browser that sends neither Sec-Fetch-Site nor Origin).
func (h *Handler) mayAct(r *http.Request) *errRefused {
	if h.cfg.Token == "" {
		return &errRefused{http.StatusForbidden, "actions need node.admin_token, and none is configured"}
	}
	ok, how := h.authed(r)
	if !ok {
		return &errRefused{http.StatusUnauthorized, "actions need the admin token: log in first"}
	}
	if how == "cookie" && !equal(r.PostFormValue("csrf"), h.derive("csrf")) {
		return &errRefused{http.StatusForbidden, "the form's CSRF token is missing or wrong: reload the page and try again"}
	}
	return nil
}

// setSession gives the browser the session cookie: HttpOnly (no script reads it) and
// SameSite=Strict (no other site's page sends it), scoped to the dashboard's path.
func (h *Handler) setSession(w http.ResponseWriter, r *http.Request, base string, value string, maxAge int) {
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: value, Path: base, MaxAge: maxAge,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
}

func (h *Handler) loginPage(w http.ResponseWriter, r *http.Request) {
	h.render(w, r, http.StatusOK, "login", h.newRequest(r), loginView{Next: safeNext(r.URL.Query().Get("next"), basePath(r)), NoToken: h.cfg.Token == ""})
}

// loginView is the login page.
type loginView struct {
	Next    string
	Failed  bool
	NoToken bool
	// Wait is set when this address failed too often: how long until it may try again.
	Wait string
}

func (h *Handler) login(w http.ResponseWriter, r *http.Request) {
	base := basePath(r)
	next := safeNext(r.PostFormValue("next"), base)
	addr := clientAddr(r)
	// The limit is checked before the token, so a right guess after the limit is not
	// told apart from a wrong one.
	if wait := h.logins.wait(addr); wait > 0 {
		secs := int(wait.Round(time.Second) / time.Second)
		w.Header().Set("Retry-After", strconv.Itoa(max(secs, 1)))
		h.render(w, r, http.StatusTooManyRequests, "login", h.newRequest(r), loginView{Next: next, Wait: shortDuration(max(wait.Round(time.Second), time.Second))})
		return
	}
	if h.cfg.Token == "" || !equal(r.PostFormValue("token"), h.cfg.Token) {
		if h.cfg.Token != "" {
			h.logins.failed(addr)
		}
		h.render(w, r, http.StatusUnauthorized, "login", h.newRequest(r), loginView{Next: next, Failed: h.cfg.Token != "", NoToken: h.cfg.Token == ""})
		return
	}
	h.logins.succeeded(addr)
	h.setSession(w, r, base, h.derive("session"), sessionHours*3600)
	http.Redirect(w, r, next, http.StatusSeeOther)
}

func (h *Handler) logout(w http.ResponseWriter, r *http.Request) {
	base := basePath(r)
	h.setSession(w, r, base, "", -1)
	http.Redirect(w, r, base, http.StatusSeeOther)
}

// safeNext keeps a redirect inside the dashboard: anything but a path under base goes
// to base.
func safeNext(next, base string) string {
	if strings.HasPrefix(next, base) && !strings.HasPrefix(next, "//") && !strings.ContainsAny(next, "\\\r\n") {
		return next
	}
	return base
}
