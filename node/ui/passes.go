package ui

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/node/health"
	"github.com/retentionkit/retention/node/metrics"
	"github.com/retentionkit/retention/passes/ledger"
)

// passRow is one pass on the passes page: the runtime's status (what GET /passes
// serves), the backlog measurement (what /metrics serves), the ledger's last finished
// run for its batch count, and in cluster mode the member that owns it.
type passRow struct {
	actors.PassStatus
	Backlog *metrics.Backlog
	LastRun *ledger.Run
	Owner   string
}

// LeftBecause is the word for why the last sweep left expired partitions attached
// (contended, kept): the reason's first word, the whole of which the cell's title holds.
func (r passRow) LeftBecause() string {
	word, _, _ := strings.Cut(r.ExpiredPartitionsReason, ":")
	return word
}

// passesView is the passes page.
type passesView struct {
	Passes     []passRow
	Slots      map[string]actors.SlotStatus
	Degraded   bool
	Drift      bool
	MeasuredAt time.Time
	Cluster    bool
	Problems   []string
}

func (v passesView) problems() []string { return v.Problems }

func (h *Handler) passesPage(r *request) (string, any) {
	return "passes", h.passRows(r, "")
}

// passRows joins what the runtime, the backlog measurement, the ledger and the cluster
// say about every pass (or only the one named).
func (h *Handler) passRows(r *request, only string) passesView {
	st := h.cfg.Runtime.Status()
	verdict := health.Judge(st, h.cfg.ReadyAfterFailures)
	v := passesView{Slots: st.Slots, Degraded: verdict.State == health.Degraded, Drift: st.Drift}
	var pr problems
	backlog := map[string]*metrics.Backlog{}
	if h.cfg.Backlog != nil {
		measured, at := h.cfg.Backlog.Backlog()
		v.MeasuredAt = at
		for i := range measured {
			backlog[measured[i].Pass] = &measured[i]
		}
	}
	var last map[string]ledger.Run
	if h.cfg.Ledger != nil {
		var err error
		last, err = h.cfg.Ledger.LastRuns(r.ctx)
		pr.add("", err, h.cfg.Redact) // the ledger's errors name themselves
	}
	owners := map[string]string{}
	if h.cfg.Cluster != nil {
		v.Cluster = true
		cv, err := h.cfg.Cluster.ClusterView(r.ctx)
		pr.add("cluster", err, h.cfg.Redact)
		for _, p := range cv.Passes {
			owners[p.Name] = p.Owner
		}
	}
	var failed []string // passes whose backlog could not be measured
	var firstErr error
	for _, p := range st.Passes {
		if only != "" && p.Name != only {
			continue
		}
		p.LastError, p.DriftError = h.cfg.Redact(p.LastError), h.cfg.Redact(p.DriftError)
		row := passRow{PassStatus: p, Backlog: backlog[p.Name], Owner: owners[p.Name]}
		if run, ok := last[p.Name]; ok {
			row.LastRun = &run
		}
		if row.Backlog != nil && row.Backlog.Err != nil {
			failed = append(failed, p.Name)
			firstErr = cmp.Or(firstErr, row.Backlog.Err)
		}
		v.Passes = append(v.Passes, row)
	}
	// One line for every pass whose backlog failed: with the database gone that is every
	// table pass, and a thousand lines of the same error help nobody.
	switch len(failed) {
	case 0:
	case 1:
		pr.add("backlog of "+failed[0], firstErr, h.cfg.Redact)
	default:
		pr.add(fmt.Sprintf("backlog of %d passes (%s, …); the first error", len(failed), failed[0]), firstErr, h.cfg.Redact)
	}
	v.Problems = pr.list
	return v
}

// passView is one pass's page: its row, the charts and its recent runs.
type passView struct {
	passesView
	Row     passRow
	Sweeps  chart
	Backlog chart
	Runs    []runRow
}

// chartSweeps and chartWindow bound the per-pass charts: the last sweeps drawn, and how
// far back the backlog line goes (the ledger keeps its samples for 48h).
const (
	chartSweeps = 60
	chartWindow = ledger.BacklogSampleRetention
	recentRuns  = 20
)

func (h *Handler) passPage(r *request) (string, any) {
	name := r.PathValue("name")
	rows := h.passRows(r, name)
	if len(rows.Passes) == 0 {
		return "", nil
	}
	v := passView{passesView: rows, Row: rows.Passes[0]}
	if h.cfg.Ledger != nil {
		pr := problems{list: v.Problems}
		hist, err := h.cfg.Ledger.SweepHistory(r.ctx, name, chartSweeps)
		pr.add("sweep history", err, h.cfg.Redact)
		v.Sweeps = sweepChart(hist)
		samples, err := h.cfg.Ledger.BacklogHistory(r.ctx, name, time.Now().Add(-chartWindow))
		pr.add("backlog history", err, h.cfg.Redact)
		v.Backlog = backlogChart(samples)
		runs, err := h.runRows(r, ledger.RunFilter{Name: name, Limit: recentRuns})
		pr.add("runs", err, h.cfg.Redact)
		v.Runs = runs
		v.Problems = pr.list
	}
	return "pass", v
}
