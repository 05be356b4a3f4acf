package node_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/node"
	"github.com/retentionkit/retention/node/config"
	"github.com/retentionkit/retention/passes"
)

// TestOpenRunsTablePassAndGoPass: a node opened from the library with a table pass
// from its file and a Go pass from its options runs both, and both are visible
// wherever the node reports its passes: /passes, /metrics and Status.
func TestOpenRunsTablePassAndGoPass(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "node.db")
	seed(t, ctx, dbPath)
	cfg := loadConfig(t, dir, dbPath, "")

	var goCalls atomic.Int64
	memoOpts := passes.DefaultOptions()
	memoOpts.RetentionPeriod, memoOpts.MaxStartupStagger = passes.Retain(time.Hour), 0
	memo := node.GoPass(passes.Registration{Name: "memo", Options: memoOpts, New: passes.Reuse(passes.PassFunc(
		func(context.Context, int, time.Time) (int, error) { goCalls.Add(1); return 0, nil }))})
	done := make(chan string, 8)
	watch := actors.ObserverFunc(func(e actors.Event) error {
		if d, ok := e.(actors.SweepDone); ok {
			select { // never block the runtime once the test stopped listening
			case done <- d.Name:
			default:
			}
		}
		return nil
	})

	n, err := node.Open(ctx, cfg, node.Options{Passes: []node.Pass{memo}, Observers: []actors.Observer{watch}})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if err := n.Start(ctx); err != nil {
		t.Fatal(err)
	}
	waitSweeps(t, done, "events", "memo")
	if goCalls.Load() == 0 {
		t.Fatal("the Go pass swept without its PurgeBatch being called")
	}

	srv := httptest.NewServer(n.Handler())
	defer srv.Close()
	for path, want := range map[string][]string{
		"/passes":  {`"events"`, `"memo"`},
		"/metrics": {`retention_sweeps_total{pass="events"`, `retention_sweeps_total{pass="memo"`},
	} {
		body := get(t, srv.URL+path)
		for _, w := range want {
			if !strings.Contains(body, w) {
				t.Errorf("GET %s has no %s:\n%s", path, w, body)
			}
		}
	}
	status := map[string]node.PassStatus{}
	for _, st := range n.Status(ctx) {
		status[st.Name] = st
	}
	if st, ok := status["events"]; !ok || st.Backlog == nil || st.LastRun == nil {
		t.Errorf("Status of the table pass: %+v (present %v); want its backlog and last run", st, ok)
	}
	if st, ok := status["memo"]; !ok || st.Backlog != nil || st.LastRun == nil {
		t.Errorf("Status of the Go pass: %+v (present %v); want its last run and no backlog", st, ok)
	}
	if err := n.Stop(context.WithoutCancel(ctx)); err != nil {
		t.Fatal(err)
	}
}

// seed creates the table pass's table with rows old enough to delete.
func seed(t *testing.T, ctx context.Context, path string) {
	t.Helper()
	db, err := passes.Open(ctx, passes.DriverSQLite, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	old := time.Now().Add(-48 * time.Hour).Unix()
	for _, q := range []string{
		"CREATE TABLE events (id INTEGER PRIMARY KEY, at INTEGER NOT NULL)",
		fmt.Sprintf("INSERT INTO events (at) VALUES (%d), (%d), (%d)", old, old, time.Now().Unix()),
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
}

// loadConfig writes a configuration with one table pass, and extra (YAML sections) after
// it, and loads it as a file would be.
func loadConfig(t *testing.T, dir, dbPath, extra string) *config.Config {
	t.Helper()
	body := fmt.Sprintf(`database:
  driver: sqlite
  dsn: %q
passes:
  - name: events
    table: events
    key: id
    timestamp: at
    timestamp_format: unix
    retention_period: 1d
    max_startup_stagger: 0s
`, dbPath) + extra
	return configFile(t, dir, body)
}

// configFile writes body as a configuration file in dir and loads it, as run would.
func configFile(t *testing.T, dir, body string) *config.Config {
	t.Helper()
	path := filepath.Join(dir, "retention.yaml")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// waitSweeps waits for a finished sweep of every named pass.
func waitSweeps(t *testing.T, done <-chan string, names ...string) {
	t.Helper()
	left := map[string]bool{}
	for _, name := range names {
		left[name] = true
	}
	timeout := time.After(time.Minute) // a bound on a hang, not a wait for the sweeps
	for len(left) > 0 {
		select {
		case name := <-done:
			delete(left, name)
		case <-timeout:
			t.Fatalf("no sweep of %v within a minute", left)
		}
	}
}

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}
