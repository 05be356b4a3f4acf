package admin

import (
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/retentionkit/retention/node/config"
	"github.com/retentionkit/retention/passes/ledger"
)

// trigger queues a sweep of the named pass now.
func (h *Handler) trigger(w http.ResponseWriter, r *http.Request) {
	if h.cfg.QueueTriggers && h.cfg.Ledger != nil {
		h.queueTrigger(w, r)
		return
	}
	if err := h.cfg.Runtime.Trigger(r.PathValue("name")); err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	w.WriteHeader(http.StatusAccepted)
}

// queueTrigger records the sweep in the ledger's work queue for whichever member owns
// the pass: any member answers a trigger for any pass.
func (h *Handler) queueTrigger(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if !slices.Contains(h.cfg.Runtime.PassNames(), name) {
		http.Error(w, fmt.Sprintf("pass %q not found", name), http.StatusNotFound)
		return
	}
	if _, err := h.cfg.Ledger.RequestSweep(r.Context(), name, time.Now()); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.WriteHeader(http.StatusAccepted)
}

// setting changes a ledger setting; only the metadata cleanup's retention is one.
func (h *Handler) setting(w http.ResponseWriter, r *http.Request) {
	if r.PathValue("key") != ledger.SettingCleanupRetention || h.cfg.Ledger == nil {
		http.Error(w, "unknown setting", http.StatusNotFound)
		return
	}
	d, err := config.ParseDuration(r.URL.Query().Get("value"))
	if err != nil || d <= 0 {
		http.Error(w, "value must be a positive duration", http.StatusBadRequest)
		return
	}
	if err := h.cfg.Ledger.SetCleanupRetention(r.Context(), d, time.Now()); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
