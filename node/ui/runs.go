package ui

import (
	"strconv"
	"time"

	"github.com/retentionkit/retention/passes/ledger"
)

// runRow is a run with its log rows.
type runRow struct {
	ledger.Run
	Logs     []ledger.LogEntry
	Duration string
}

// runsView is the runs page: the filter as given, the choices, one page of runs.
type runsView struct {
	Filter     ledger.RunFilter
	Since      string // as the form gives it
	Until      string
	Names      []string
	States     []ledger.State
	Runs       []runRow
	Older      string // the next page's URL, "" on the last
	LedgerOff  bool
	Problems   []string
	BadFilters []string
}

func (v runsView) problems() []string { return append(v.BadFilters, v.Problems...) }

// timeForm is how the form's datetime-local fields read (UTC).
const timeForm = "2006-01-02T15:04"

func (h *Handler) runsPage(r *request) (string, any) {
	q := r.URL.Query()
	v := runsView{States: []ledger.State{ledger.Pending, ledger.InProgress, ledger.Completed, ledger.Failed, ledger.Cancelled}, Since: q.Get("since"), Until: q.Get("until")}
	if h.cfg.Ledger == nil {
		v.LedgerOff = true
		return "runs", v
	}
	f := ledger.RunFilter{Name: q.Get("pass"), State: ledger.State(q.Get("state"))}
	parseTime := func(field, s string) time.Time {
		if s == "" {
			return time.Time{}
		}
		t, err := time.Parse(timeForm, s)
		if err != nil {
			if t, err = time.Parse(time.RFC3339, s); err != nil {
				v.BadFilters = append(v.BadFilters, field+": "+strconv.Quote(s)+" is not a time like 2026-12-01T14:00 (UTC)")
			}
		}
		return t
	}
	f.Since, f.Until = parseTime("since", v.Since), parseTime("until", v.Until)
	f.BeforeID, _ = strconv.ParseInt(q.Get("before"), 10, 64)
	f.Limit, _ = strconv.Atoi(q.Get("limit"))
	v.Filter = f
	var pr problems
	names, err := h.cfg.Ledger.RunNames(r.ctx)
	pr.add("run names", err, h.cfg.Redact)
	v.Names = names
	runs, err := h.runRows(r, f)
	pr.add("runs", err, h.cfg.Redact)
	v.Runs = runs
	if len(runs) > 0 && len(runs) == ledgerLimit(f) {
		older := q
		older.Set("before", strconv.FormatInt(runs[len(runs)-1].ID, 10))
		older.Del("fragment")
		v.Older = r.base + "runs?" + older.Encode()
	}
	v.Problems = pr.list
	return "runs", v
}

func ledgerLimit(f ledger.RunFilter) int {
	switch {
	case f.Limit < 1:
		return ledger.DefaultRunPage
	case f.Limit > ledger.MaxRunPage:
		return ledger.MaxRunPage
	}
	return f.Limit
}

// runRows reads a page of runs and their log rows, secrets masked.
func (h *Handler) runRows(r *request, f ledger.RunFilter) ([]runRow, error) {
	runs, err := h.cfg.Ledger.FindRuns(r.ctx, f)
	if err != nil {
		return nil, err
	}
	ids := make([]int64, len(runs))
	for i, run := range runs {
		ids[i] = run.ID
	}
	logs, err := h.cfg.Ledger.LogsOf(r.ctx, ids)
	if err != nil {
		return nil, err
	}
	rows := make([]runRow, len(runs))
	for i, run := range runs {
		if run.Error != nil {
			run.Error = ptrTo(h.cfg.Redact(*run.Error))
		}
		entries := logs[run.ID]
		for j := range entries {
			entries[j].Message = h.cfg.Redact(entries[j].Message)
		}
		rows[i] = runRow{Run: run, Logs: entries, Duration: dash}
		if run.EndTime != nil {
			rows[i].Duration = shortDuration(run.EndTime.Sub(run.StartTime))
		}
	}
	return rows, nil
}

func ptrTo[T any](v T) *T { return &v }
