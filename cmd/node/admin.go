package main

import (
	"crypto/subtle"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/passes/ledger"
)

// admin is the node's HTTP endpoint: health, readiness, pass status, metrics, and the
// mutating requests (trigger, settings), which need the bearer token.
type admin struct {
	rt     *actors.Runtime
	ledger *ledger.Ledger
	token  string
	ready  atomic.Bool
	reg    *prometheus.Registry
}

func (a *admin) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	mux.HandleFunc("GET /readyz", a.readyz)
	mux.HandleFunc("GET /passes", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(a.rt.Status())
	})
	mux.Handle("GET /metrics", promhttp.HandlerFor(a.reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("POST /trigger/{name}", a.authorized(func(w http.ResponseWriter, r *http.Request) {
		if err := a.rt.Trigger(r.PathValue("name")); err != nil {
			http.Error(w, err.Error(), http.StatusNotFound)
			return
		}
		w.WriteHeader(http.StatusAccepted)
	}))
	mux.HandleFunc("POST /settings/{key}", a.authorized(func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("key") != ledger.SettingCleanupRetention || a.ledger == nil {
			http.Error(w, "unknown setting", http.StatusNotFound)
			return
		}
		d, err := ParseDuration(r.URL.Query().Get("value"))
		if err != nil || d <= 0 {
			http.Error(w, "value must be a positive duration", http.StatusBadRequest)
			return
		}
		if err := a.ledger.SetCleanupRetention(r.Context(), d, time.Now()); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	return mux
}

func (a *admin) readyz(w http.ResponseWriter, _ *http.Request) {
	switch {
	case !a.ready.Load():
		http.Error(w, "starting", http.StatusServiceUnavailable)
	case a.rt.Status().Degraded:
		http.Error(w, "degraded: a pass was stopped by supervision", http.StatusServiceUnavailable)
	default:
		_, _ = w.Write([]byte("ready\n"))
	}
}

// authorized refuses a mutating request without the configured bearer token, and
// every mutating request when no token is configured.
func (a *admin) authorized(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if a.token == "" {
			http.Error(w, "mutating requests need node.admin_token", http.StatusForbidden)
			return
		}
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(a.token)) != 1 {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		next(w, r)
	}
}

// serve listens on addr and returns the server and its bound address.
func (a *admin) serve(addr string) (*http.Server, string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, "", err
	}
	srv := &http.Server{Handler: a.handler(), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return srv, ln.Addr().String(), nil
}
