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

// readiness is /readyz's JSON body.
type readiness struct {
	Status string        `json:"status"` // ready, starting or degraded
	Passes []passTrouble `json:"passes,omitempty"`
}

// passTrouble is one pass that makes the node degraded, and why.
type passTrouble struct {
	Pass   string `json:"pass"`
	Reason string `json:"reason"` // configuration_drift or stopped_by_supervision
	Error  string `json:"error,omitempty"`
}

// readyz answers 200 once the runtime started, and 503 before, or while a pass is
// degraded: stopped by supervision, or in configuration drift (a table or column it
// was configured with is missing), naming each such pass and why.
func (a *admin) readyz(w http.ResponseWriter, _ *http.Request) {
	body, code := readiness{Status: "ready"}, http.StatusOK
	switch st := a.rt.Status(); {
	case !a.ready.Load():
		body.Status, code = "starting", http.StatusServiceUnavailable
	case st.Degraded || st.Drift:
		body.Status, code = "degraded", http.StatusServiceUnavailable
		for _, p := range st.Passes {
			switch {
			case p.Degraded:
				body.Passes = append(body.Passes, passTrouble{Pass: p.Name, Reason: "stopped_by_supervision", Error: p.LastError})
			case p.Drift:
				body.Passes = append(body.Passes, passTrouble{Pass: p.Name, Reason: "configuration_drift", Error: p.DriftError})
			}
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(body)
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
