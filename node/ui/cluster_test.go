package ui_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/retentionkit/retention/node/admin"
	"github.com/retentionkit/retention/node/ui"
	"github.com/retentionkit/retention/passes"
)

// topology is this test's admin.ClusterSource: a view the test sets, or an error, as
// the cluster mode's implementation would answer.
type topology struct {
	mu   sync.Mutex
	view admin.ClusterView
	err  error
}

func (s *topology) ClusterView(context.Context) (admin.ClusterView, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.view, s.err
}

func (s *topology) set(v admin.ClusterView, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.view, s.err = v, err
}

// The cluster page renders the members, each pass's owner and lock holder (helpers
// too) and the slots, from the ClusterSource alone; the passes page gains the owner
// column; a source that fails shows its error.
func TestClusterPageInBrowser(t *testing.T) {
	ctx := browser(t)
	rt := startedRuntime(t, "audit-log", "orders")
	src := &topology{}
	since := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	src.set(admin.ClusterView{
		Enabled: true, Name: "retention", Member: &admin.ClusterMember{ID: "node-a", Address: "10.0.0.1:7001"},
		Members: []admin.ClusterMember{{ID: "node-a", Address: "10.0.0.1:7001"}, {ID: "node-b", Address: "10.0.0.2:7001"}},
		Passes: []admin.ClusterPass{
			{Name: "audit-log", Owner: "node-b", LockHolder: &passes.LockHolderInfo{Member: "node-b", PID: 4242, ApplicationName: "retention:node-b", ClientAddr: "10.0.0.2", BackendStart: since},
				Helpers: []admin.ClusterPass{{Name: "audit-log#1", Owner: "node-a"}}},
			{Name: "orders", Owner: "node-a"},
		},
		Slots:  []admin.ClusterSlots{{Database: "app", InUse: 1, Capacity: 4}},
		ReadAt: since,
	}, nil)
	h, err := ui.New(ui.Config{Runtime: rt, Cluster: src})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(admin.New(admin.Config{Runtime: rt, Cluster: src, UI: h}))
	defer srv.Close()

	do(t, ctx, chromedp.Navigate(srv.URL+"/ui/cluster"), chromedp.WaitVisible(chromedp.CSS("#owners")))
	members := eval[[]string](t, ctx, `Array.from(document.querySelectorAll('#members tr[data-member]')).map(tr => tr.innerText.replace(/\s+/g, ' ').trim())`)
	if strings.Join(members, "|") != "node-a 10.0.0.1:7001|node-b 10.0.0.2:7001" {
		t.Errorf("members = %q", members)
	}
	owners := eval[[]string](t, ctx, `Array.from(document.querySelectorAll('#owners tr[data-pass]')).map(tr => tr.dataset.pass + "=" + tr.querySelector('[data-k=owner]').textContent + "/" + tr.querySelector('[data-k=lock]').textContent)`)
	if strings.Join(owners, " ") != "audit-log=node-b/node-b audit-log#1=node-a/— orders=node-a/—" {
		t.Errorf("owners = %q", owners)
	}
	if row := eval[string](t, ctx, `document.querySelector('#owners tr[data-pass="audit-log"]').innerText`); !strings.Contains(row, "pid 4242") || !strings.Contains(row, "retention:node-b") {
		t.Errorf("lock holder row = %q", row)
	}
	if slots := eval[string](t, ctx, `document.getElementById('slots').innerText`); !strings.Contains(slots, "app") || !strings.Contains(slots, "1") || !strings.Contains(slots, "4") {
		t.Errorf("slots = %q", slots)
	}
	screenshot(t, ctx, "cluster")

	do(t, ctx, chromedp.Navigate(srv.URL+"/ui/"), chromedp.WaitVisible(chromedp.CSS("#passes")))
	if got := eval[string](t, ctx, `document.querySelector('tr[data-pass="audit-log"] td[data-k=owner]').textContent`); got != "node-b" {
		t.Errorf("owner on the passes page = %q", got)
	}

	src.set(admin.ClusterView{}, errors.New("etcd: context deadline exceeded"))
	do(t, ctx, chromedp.Navigate(srv.URL+"/ui/cluster"), chromedp.WaitVisible(chromedp.CSS("#problems")))
	if got := eval[string](t, ctx, `document.getElementById('problems').innerText`); !strings.Contains(got, "etcd: context deadline exceeded") {
		t.Errorf("problems = %q", got)
	}
}
