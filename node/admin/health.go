package admin

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/node/health"
)

// liveness is /healthz's JSON body.
type liveness struct {
	Status string `json:"status"` // ok, stopping or unresponsive
	Error  string `json:"error,omitempty"`
}

// healthz is liveness: 200 while the process and its pass actors answer a round trip
// within LivenessTimeout, 503 when one does not (a restart is what helps then). Before
// the runtime starts there is nothing to ask, and while it stops (in-flight batches
// finishing within the grace period) it answers "stopping" with 200, so a probe never
// kills a node mid-shutdown. Passes supervision stopped are readiness's business, so a
// stuck pass never gets the process killed.
func (h *Handler) healthz(w http.ResponseWriter, r *http.Request) {
	body, code := liveness{Status: "ok"}, http.StatusOK
	if h.ready.Load() {
		ctx, cancel := context.WithTimeout(r.Context(), h.cfg.LivenessTimeout)
		defer cancel()
		switch err := h.cfg.Runtime.Ping(ctx); {
		case errors.Is(err, actors.ErrNotRunning):
			body.Status = "stopping" // finishing its batches within the grace period: alive
		case err != nil:
			body, code = liveness{Status: "unresponsive", Error: err.Error()}, http.StatusServiceUnavailable
		}
	}
	writeJSON(w, code, body)
}

// Readiness is /readyz's JSON body: the node's health.Verdict. It is exported so a
// reader of the probe (`retention status`) decodes the shape the probe writes.
type Readiness struct {
	Status string           `json:"status"` // ready, starting or degraded
	Passes []health.Problem `json:"passes,omitempty"`
}

// Verdict is the verdict the body states.
func (r Readiness) Verdict() health.Verdict {
	return health.Verdict{State: health.State(r.Status), Problems: r.Passes}
}

// readyz answers 503 "starting" before the runtime started, 503 "degraded" naming each
// pass and why while a pass failed its last ReadyAfterFailures sweeps, was stopped by
// supervision, or is in configuration drift, and 200 "ready" otherwise.
func (h *Handler) readyz(w http.ResponseWriter, _ *http.Request) {
	if !h.ready.Load() {
		writeJSON(w, http.StatusServiceUnavailable, Readiness{Status: string(health.Starting)})
		return
	}
	v, code := health.Judge(h.cfg.Runtime.Status(), h.cfg.ReadyAfterFailures), http.StatusOK
	if v.State != health.Ready {
		code = http.StatusServiceUnavailable
	}
	writeJSON(w, code, Readiness{Status: string(v.State), Passes: v.Problems})
}

func writeJSON(w http.ResponseWriter, code int, body any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(body)
}
