package ui

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/retentionkit/retention/core"
	"github.com/retentionkit/retention/node/config"
	"github.com/retentionkit/retention/passes/ledger"
)

// outcome is what an action did: its target and result for the ledger's log and the
// page's note, or why it failed (with the status to answer).
type outcome struct {
	target, detail string
	err            error
	code           int
}

// refusedView is the page a refused action answers with.
type refusedView struct{ Reason string }

// action guards an operator action: the cross-origin check, then the token (and CSRF
// token for a cookie), then the action itself, recorded in the ledger's log whatever
// it did. A refused request is recorded nowhere: it did nothing.
func (h *Handler) action(kind string, do func(r *http.Request) outcome) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := h.cross.Check(r); err != nil {
			h.refuse(w, r, &errRefused{http.StatusForbidden, "cross-site request refused: " + err.Error()})
			return
		}
		if ref := h.mayAct(r); ref != nil {
			h.refuse(w, r, ref)
			return
		}
		o := do(r)
		if h.cfg.Ledger != nil {
			// Recorded on a context of its own: a client that goes away after the action
			// must not leave it unrecorded.
			ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), h.cfg.Timeout)
			_, rerr := h.cfg.Ledger.RecordAction(ctx, ledger.Action{Kind: kind, Target: o.target, Detail: o.detail, Err: o.err, From: r.RemoteAddr, At: time.Now()})
			cancel()
			if rerr != nil && o.err == nil {
				o.err, o.code = fmt.Errorf("done, but not recorded in the ledger: %w", rerr), http.StatusInternalServerError
			}
		}
		if o.err != nil {
			if o.code == 0 {
				o.code = http.StatusInternalServerError
			}
			h.refuse(w, r, &errRefused{o.code, fmt.Sprintf("%s %s: %s", kind, o.target, h.cfg.Redact(o.err.Error()))})
			return
		}
		back := safeNext(r.PostFormValue("back"), basePath(r))
		u, _ := url.Parse(back)
		q := u.Query()
		q.Set("note", fmt.Sprintf("%s %s: %s", kind, o.target, o.detail))
		u.RawQuery = q.Encode()
		http.Redirect(w, r, u.String(), http.StatusSeeOther)
	})
}

func (h *Handler) refuse(w http.ResponseWriter, r *http.Request, ref *errRefused) {
	h.render(w, r, ref.code, "refused", h.newRequest(r), refusedView{Reason: ref.reason})
}

// trigger asks for a sweep of the pass now. With the ledger it is queued there, as
// `retention trigger` does: whichever node runs the pass (in cluster mode, its owner)
// claims it within a poll, and the sweep finishes the queued run. Without the ledger the
// pass sweeps on this node, as POST /trigger/{name} does.
func (h *Handler) trigger(r *http.Request) outcome {
	name := r.PathValue("name")
	if !slices.Contains(h.cfg.Runtime.PassNames(), name) {
		return outcome{target: name, err: fmt.Errorf("no pass %q", name), code: http.StatusNotFound}
	}
	if h.cfg.Ledger == nil {
		if err := h.cfg.Runtime.Trigger(name); err != nil {
			return outcome{target: name, err: err, code: http.StatusConflict}
		}
		return outcome{target: name, detail: "sweep started"}
	}
	c, err := h.cfg.Ledger.RequestSweep(r.Context(), name, time.Now())
	if err != nil {
		return outcome{target: name, err: err}
	}
	return outcome{target: name, detail: fmt.Sprintf("sweep queued as run %d", c.RunID)}
}

// retry queues a retry of a dead letter; the node's work-queue poller revives the pass.
func (h *Handler) retry(r *http.Request) outcome {
	target := "dead letter " + r.PathValue("id")
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		return outcome{target: target, err: errors.New("not a dead letter id"), code: http.StatusBadRequest}
	}
	if h.cfg.Ledger == nil {
		return outcome{target: target, err: errors.New("the ledger is off"), code: http.StatusNotFound}
	}
	c, err := h.cfg.Ledger.RetryDeadLetter(r.Context(), id, time.Now())
	if err != nil {
		return outcome{target: target, err: err, code: statusOf(err)}
	}
	return outcome{target: target, detail: fmt.Sprintf("queued a retry of %s as run %d", c.Pass, c.RunID)}
}

// release takes one quarantined row out of quarantine; its pass's next sweep tries it.
func (h *Handler) release(r *http.Request) outcome {
	pass, key := r.PostFormValue("pass"), r.PostFormValue("key")
	target := fmt.Sprintf("%s row %s", pass, key)
	if pass == "" || key == "" {
		return outcome{target: target, err: errors.New("give the pass and the row key"), code: http.StatusBadRequest}
	}
	if h.cfg.Ledger == nil {
		return outcome{target: target, err: errors.New("the ledger is off"), code: http.StatusNotFound}
	}
	n, err := h.cfg.Ledger.ReleaseQuarantined(r.Context(), pass, []string{key})
	switch {
	case err != nil:
		return outcome{target: target, err: err}
	case n == 0:
		return outcome{target: target, err: errors.New("no such row in quarantine"), code: http.StatusNotFound}
	}
	return outcome{target: target, detail: "released; the next sweep tries it again"}
}

// setting changes the runtime override of the metadata cleanup's default retention.
func (h *Handler) setting(r *http.Request) outcome {
	target := ledger.SettingCleanupRetention
	if h.cfg.Ledger == nil || h.cfg.Cleanup == nil {
		return outcome{target: target, err: errors.New("the metadata cleanup is off"), code: http.StatusNotFound}
	}
	raw := r.PostFormValue("value")
	d, err := config.ParseDuration(raw)
	if err != nil || d <= 0 {
		return outcome{target: target, err: fmt.Errorf("%q is not a positive duration (like 2h or 7d)", raw), code: http.StatusBadRequest}
	}
	if err := h.cfg.Ledger.SetCleanupRetention(r.Context(), d, time.Now()); err != nil {
		return outcome{target: target, err: err}
	}
	return outcome{target: target, detail: "set to " + d.String()}
}

// clearSetting removes a runtime override, as `retention settings unset KEY` does: the
// form's key, the metadata cleanup's default retention when it gives none (every node's
// next cleanup goes back to the file's value, or the built-in default), or a pass's live
// setting (pass.NAME.FIELD; every node puts the file's value back within seconds).
func (h *Handler) clearSetting(r *http.Request) outcome {
	target := cmp.Or(r.PostFormValue("key"), ledger.SettingCleanupRetention)
	cleanup := target == ledger.SettingCleanupRetention
	switch {
	case h.cfg.Ledger == nil:
		return outcome{target: target, err: errors.New("the ledger is off"), code: http.StatusNotFound}
	case cleanup && h.cfg.Cleanup == nil:
		return outcome{target: target, err: errors.New("the metadata cleanup is off"), code: http.StatusNotFound}
	case !cleanup && !strings.HasPrefix(target, ledger.PassSettingPrefix):
		return outcome{target: target, err: fmt.Errorf("not a runtime setting (want %s or %sNAME.FIELD)", ledger.SettingCleanupRetention, ledger.PassSettingPrefix), code: http.StatusBadRequest}
	}
	removed, err := h.cfg.Ledger.UnsetSetting(r.Context(), target)
	switch {
	case err != nil:
		return outcome{target: target, err: err}
	case !removed:
		return outcome{target: target, err: errors.New("no override is set"), code: http.StatusConflict}
	case cleanup:
		return outcome{target: target, detail: "override cleared; back to " + h.cfg.Cleanup.Retention.String()}
	}
	return outcome{target: target, detail: "override cleared; every node puts the configuration file's value back"}
}

func statusOf(err error) int {
	var nf *core.NotFoundError
	var conflict *core.ConflictError
	switch {
	case errors.As(err, &nf):
		return http.StatusNotFound
	case errors.As(err, &conflict):
		return http.StatusConflict
	}
	return http.StatusInternalServerError
}
