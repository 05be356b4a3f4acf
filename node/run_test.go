package node_test

import (
	"context"
	"errors"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/retentionkit/retention/node"
	"github.com/retentionkit/retention/node/health"
	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/ledger"
)

// runOptions are the options `retention run` opens its node with (cmd/node/run.go):
// its logger aside, it serves the admin API on the file's node.admin address.
func runOptions(extra ...node.Pass) node.Options {
	return node.Options{ServeAdmin: true, Passes: extra}
}

// TestOpenRunsWhatRunRuns: a node opened with run's options serves its admin API on the
// file's address from Start, heartbeats in the ledger, claims a sweep queued in the
// ledger (the work-queue poller, which `retention trigger` relies on) and, once Close
// has run, serves nothing and leaves no goroutine behind it in the listener.
func TestOpenRunsWhatRunRuns(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "node.db")
	seed(t, ctx, dbPath)
	cfg := loadConfig(t, dir, dbPath, "node:\n  admin: 127.0.0.1:0\n")
	// The table pass's first sweep is due at once and the next only after its sweep
	// interval, so a second sweep within the test is the queued one.
	n, err := node.Open(ctx, cfg, runOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if n.AdminAddr() != "" {
		t.Fatalf("the admin listener is up before Start, on %s", n.AdminAddr())
	}
	if err := n.Start(ctx); err != nil {
		t.Fatal(err)
	}
	addr := n.AdminAddr()
	if addr == "" || strings.HasSuffix(addr, ":0") {
		t.Fatalf("AdminAddr = %q after Start, want the bound address", addr)
	}
	waitFor(t, "/readyz to answer ready on the listener", func() bool {
		v, err := node.ReadVerdict(ctx, addr)
		return err == nil && v.State == health.Ready
	})

	l := openLedger(t, ctx, dbPath, cfg.LedgerPrefix())
	nodes, err := l.Nodes(ctx)
	if err != nil || len(nodes) != 1 {
		t.Fatalf("ledger nodes = %v (%v), want the node's one heartbeat row", nodes, err)
	}
	waitFor(t, "the first sweep's run", func() bool { return completedRuns(t, ctx, l, "events") >= 1 })
	before := completedRuns(t, ctx, l, "events")
	if _, err := l.RequestSweep(ctx, "events", time.Now()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the queued sweep to be claimed and run", func() bool { return completedRuns(t, ctx, l, "events") > before })

	if err := n.Stop(context.WithoutCancel(ctx)); err != nil {
		t.Fatalf("Stop = %v, want nil for a healthy node", err)
	}
	n.Close()
	if resp, err := http.Get("http://" + addr + "/healthz"); err == nil {
		resp.Body.Close()
		t.Fatal("the admin listener still answers after Close")
	}
}

// TestStatusReadyzAndTheDashboardShareOneVerdict mirrors node/ui's
// TestReadyzAndTheDashboardShareOneVerdict with the third reader: a pass whose sweeps
// fail makes the node degraded on /readyz, on the dashboard, and in what `retention
// status` prints, both from the running node (ReadVerdict) and, once no node runs, from
// the ledger (LedgerVerdict).
func TestStatusReadyzAndTheDashboardShareOneVerdict(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "node.db")
	seed(t, ctx, dbPath)
	cfg := loadConfig(t, dir, dbPath, "node:\n  admin: 127.0.0.1:0\n  ready_after_failures: 1\n")
	opts := passes.DefaultOptions()
	opts.RetentionPeriod, opts.MaxStartupStagger = passes.Retain(time.Hour), 0
	exports := node.GoPass(passes.Registration{Name: "exports", Options: opts, New: passes.Reuse(passes.PassFunc(
		func(context.Context, int, time.Time) (int, error) {
			return 0, errors.New("the export bucket refused the batch")
		}))})
	n, err := node.Open(ctx, cfg, runOptions(exports))
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if err := n.Start(ctx); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the exports pass to fail", func() bool { return n.Verdict().State == health.Degraded })

	probe, err := node.ReadVerdict(ctx, n.AdminAddr())
	if err != nil {
		t.Fatal(err)
	}
	page := get(t, "http://"+n.AdminAddr()+"/ui/")
	if !strings.Contains(page, `<b class="bad">degraded</b>`) {
		t.Fatalf("the dashboard does not say degraded:\n%s", page)
	}
	if err := n.Stop(context.WithoutCancel(ctx)); err != nil && !errors.Is(err, node.ErrStoppedDegraded) {
		t.Fatal(err)
	}
	l := openLedger(t, ctx, dbPath, cfg.LedgerPrefix())
	offline, err := node.LedgerVerdict(ctx, l, []string{"events", "exports"}, cfg.ReadyAfterFailures())
	if err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]health.Verdict{"/readyz": probe, "the ledger": offline} {
		if v.State != health.Degraded || !slices.ContainsFunc(v.Problems, func(p health.Problem) bool { return p.Pass == "exports" }) {
			t.Errorf("%s: verdict %q, want degraded by exports", name, v)
		}
		if slices.ContainsFunc(v.Problems, func(p health.Problem) bool { return p.Pass == "events" }) {
			t.Errorf("%s: verdict %q blames the healthy table pass", name, v)
		}
		if line := v.String(); !strings.HasPrefix(line, "degraded: exports (") || !strings.Contains(line, "the export bucket refused the batch") {
			t.Errorf("%s: status line %q does not name the pass and its error", name, line)
		}
	}
}

// openLedger opens the node's ledger on its SQLite file, as another process would.
func openLedger(t *testing.T, ctx context.Context, dbPath, prefix string) *ledger.Ledger {
	t.Helper()
	db, err := passes.Open(ctx, passes.DriverSQLite, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	l, err := ledger.New(db, prefix)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// completedRuns counts name's completed runs in l.
func completedRuns(t *testing.T, ctx context.Context, l *ledger.Ledger, name string) int {
	t.Helper()
	runs, err := l.Runs(ctx, name, 50)
	if err != nil {
		t.Fatal(err)
	}
	count := 0
	for _, r := range runs {
		if r.State == ledger.Completed {
			count++
		}
	}
	return count
}

// waitFor polls cond until it holds, failing the test past a bound on a hang.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)       // a bound on a hang, not a pace
	tick := time.NewTicker(10 * time.Millisecond) // polling the condition
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited a minute for %s", what)
		}
		<-tick.C
	}
}
