// Package admin is the node's HTTP handler: liveness, readiness, pass status, metrics,
// and the mutating requests (trigger a sweep, change a setting), which need a bearer
// token. It lives outside package main so a service embedding the runtime mounts the
// same routes on its own server; docs/node.md documents each route.
package admin

import (
	"crypto/subtle"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/passes/ledger"
)

// Config is what the handler serves.
type Config struct {
	Runtime *actors.Runtime
	// Ledger backs POST /settings/{key}; nil answers 404 there.
	Ledger *ledger.Ledger
	// Token guards the mutating routes; empty refuses them all.
	Token string
	// Gatherer is what GET /metrics serves; nil serves nothing there (404).
	Gatherer prometheus.Gatherer
	// ReadyAfterFailures is how many failed sweeps in a row make a pass degraded on
	// /readyz (config.DefaultReadyAfterFailures in the node); below 1 counts as 1.
	ReadyAfterFailures int
	// LivenessTimeout bounds /healthz's round trip to the actors (default 3s, so the
	// answer, with its reason, comes within a probe's usual 5s timeout).
	LivenessTimeout time.Duration
	// Cluster backs GET /cluster in cluster mode; nil answers {"enabled": false}.
	Cluster ClusterSource
	// QueueTriggers makes POST /trigger/{name} queue the sweep in Ledger's work queue
	// instead of triggering this runtime, so the member that owns the pass runs it
	// (cluster mode). False triggers the local runtime, as a single node does.
	QueueTriggers bool
}

// Handler serves the admin routes. It answers /readyz with 503 "starting" until
// SetReady, so a probe never sends traffic to a node whose runtime has not started.
type Handler struct {
	cfg   Config
	ready atomic.Bool
	mux   *http.ServeMux
}

// New returns the handler for cfg.
func New(cfg Config) *Handler {
	if cfg.LivenessTimeout <= 0 {
		cfg.LivenessTimeout = 3 * time.Second
	}
	h := &Handler{cfg: cfg, mux: http.NewServeMux()}
	h.mux.HandleFunc("GET /healthz", h.healthz)
	h.mux.HandleFunc("GET /readyz", h.readyz)
	h.mux.HandleFunc("GET /passes", h.passes)
	h.mux.HandleFunc("GET /cluster", h.cluster)
	if cfg.Gatherer != nil {
		h.mux.Handle("GET /metrics", promhttp.HandlerFor(cfg.Gatherer, promhttp.HandlerOpts{}))
	}
	h.mux.HandleFunc("POST /trigger/{name}", h.authorized(h.trigger))
	h.mux.HandleFunc("POST /settings/{key}", h.authorized(h.setting))
	return h
}

// SetReady marks the runtime started (true) or stopping (false).
func (h *Handler) SetReady(ready bool) { h.ready.Store(ready) }

// ServeHTTP routes the request.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

// authorized refuses a mutating request without the configured bearer token, and
// every mutating request when no token is configured.
func (h *Handler) authorized(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if h.cfg.Token == "" {
			http.Error(w, "mutating requests need node.admin_token", http.StatusForbidden)
			return
		}
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(h.cfg.Token)) != 1 {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		next(w, r)
	}
}
