package admin

import (
	"net/http"
	"time"

	"github.com/retentionkit/retention/node/live"
	"github.com/retentionkit/retention/passes/ledger"
)

// The admin API's live control, the same as the commands: a pass's pace through
// POST /settings/pass.NAME.FIELD?value=V (DELETE there returns it to the file's value),
// and POST /passes/{name}/pause and /resume. All are stored in the ledger, so every node
// sharing it applies them at its next poll; the answer says so with 202 Accepted.

// setPassSetting stores pass.NAME.FIELD after checking it as `settings set` does.
func (h *Handler) setPassSetting(w http.ResponseWriter, r *http.Request) {
	k, err := live.ParseKey(r.PathValue("key"), h.cfg.Runtime.PassNames(), false)
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	v, err := live.Parse(k, r.URL.Query().Get("value"))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if err := h.cfg.Ledger.SetSetting(r.Context(), k.String(), v, time.Now()); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.WriteHeader(http.StatusAccepted)
}

// unsetSetting removes a pass's live setting (or the cleanup's retention override).
func (h *Handler) unsetSetting(w http.ResponseWriter, r *http.Request) {
	if h.cfg.Ledger == nil {
		http.Error(w, "unknown setting", http.StatusNotFound)
		return
	}
	key := r.PathValue("key")
	if key != ledger.SettingCleanupRetention {
		k, err := live.ParseKey(key, h.cfg.Runtime.PassNames(), false)
		if err != nil {
			http.Error(w, err.Error(), http.StatusNotFound)
			return
		}
		key = k.String()
	}
	if _, err := h.cfg.Ledger.UnsetSetting(r.Context(), key); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.WriteHeader(http.StatusAccepted)
}

func (h *Handler) pause(w http.ResponseWriter, r *http.Request)  { h.setPaused(w, r, true) }
func (h *Handler) resume(w http.ResponseWriter, r *http.Request) { h.setPaused(w, r, false) }

func (h *Handler) setPaused(w http.ResponseWriter, r *http.Request, paused bool) {
	if h.cfg.Ledger == nil {
		http.Error(w, "pause and resume need the ledger", http.StatusNotFound)
		return
	}
	name := r.PathValue("name")
	k, err := live.ParseKey(ledger.PassSettingKey(name, live.FieldPaused), h.cfg.Runtime.PassNames(), true)
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	if paused {
		err = h.cfg.Ledger.SetSetting(r.Context(), k.String(), "true", time.Now())
	} else {
		_, err = h.cfg.Ledger.UnsetSetting(r.Context(), k.String())
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.WriteHeader(http.StatusAccepted)
}
