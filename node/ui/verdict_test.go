package ui_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/retentionkit/retention/node/admin"
	"github.com/retentionkit/retention/node/ui"
	"github.com/retentionkit/retention/passes"
)

// The readiness probe and the dashboard read one verdict: a pass whose sweeps keep
// failing (supervision has not given up on it) makes the node degraded on both. Before
// the verdict had one home, the dashboard said degraded only once supervision gave up,
// while /readyz already answered 503.
func TestReadyzAndTheDashboardShareOneVerdict(t *testing.T) {
	rt := startedRuntimeOf(t, passes.PassFunc(func(context.Context, int, time.Time) (int, error) {
		return 0, errors.New("the export bucket refused the batch")
	}), "exports")
	dash, err := ui.New(ui.Config{Runtime: rt, ReadyAfterFailures: 1})
	if err != nil {
		t.Fatal(err)
	}
	h := admin.New(admin.Config{Runtime: rt, UI: dash, ReadyAfterFailures: 1})
	h.SetReady(true) // the node marks it ready once its runtime started

	if err := rt.Trigger("exports"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)  // a bound on a hang, not a pace
	tick := time.NewTicker(10 * time.Millisecond) // polling the status for the failure
	defer tick.Stop()
	for rt.Status().Passes[0].ConsecutiveFailures < 1 {
		if time.Now().After(deadline) {
			t.Fatalf("the pass never failed: %+v", rt.Status().Passes[0])
		}
		<-tick.C
	}

	probe := call{method: "GET", path: "/readyz", from: local}.do(h)
	if probe.Code != http.StatusServiceUnavailable || !strings.Contains(probe.Body.String(), `"degraded"`) {
		t.Fatalf("/readyz = %d %s; want 503 degraded", probe.Code, probe.Body)
	}
	page := call{method: "GET", path: "/ui/", from: local}.do(h)
	if page.Code != http.StatusOK || !strings.Contains(page.Body.String(), `<b class="bad">degraded</b>`) {
		t.Fatalf("the dashboard (%d) does not say degraded where /readyz does:\n%s", page.Code, page.Body)
	}
}
