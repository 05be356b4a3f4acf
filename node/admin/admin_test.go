package admin

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sirupsen/logrus"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/passes"
)

// noopRuntime is a runtime with one pass that finds nothing to delete, waiting out a
// long stagger before its first sweep, logging nowhere.
func noopRuntime(t *testing.T) *actors.Runtime {
	t.Helper()
	quiet := logrus.New()
	quiet.SetOutput(io.Discard)
	rt := actors.New(actors.Config{Logger: quiet})
	opts := passes.DefaultOptions()
	opts.RetentionPeriod = passes.Retain(24 * time.Hour)
	opts.MaxStartupStagger = time.Hour
	purge := passes.PassFunc(func(context.Context, int, time.Time) (int, error) { return 0, nil })
	if err := rt.Register(passes.Registration{Name: "noop", New: passes.Reuse(purge), Options: opts}); err != nil {
		t.Fatal(err)
	}
	return rt
}

func TestReadyzTurnsReadyOnceStarted(t *testing.T) {
	t.Parallel()
	rt := noopRuntime(t)
	h := New(Config{Runtime: rt, Gatherer: prometheus.NewRegistry()})
	var last string
	get := func(path string) int {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		last = rec.Body.String()
		return rec.Code
	}
	if code := get("/readyz"); code != http.StatusServiceUnavailable {
		t.Fatalf("/readyz before start = %d, want 503", code)
	}
	if err := rt.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Stop(context.Background()) })
	h.SetReady(true)
	if code := get("/readyz"); code != http.StatusOK {
		t.Fatalf("/readyz after start = %d, want 200", code)
	}
	if code := get("/healthz"); code != http.StatusOK {
		t.Fatalf("/healthz of a running runtime = %d", code)
	}
	if err := rt.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if code := get("/healthz"); code != http.StatusOK || !strings.Contains(last, `"stopping"`) {
		t.Fatalf("/healthz once the runtime stopped = %d %s, want 200 stopping", code, last)
	}
}

// /passes answers the documented snake_case fields (docs/node.md), never Go field names.
func TestPassesIsSnakeCaseJSON(t *testing.T) {
	t.Parallel()
	rt := noopRuntime(t)
	if err := rt.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Stop(context.Background()) })
	h := New(Config{Runtime: rt})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/passes", nil))
	var body map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatalf("/passes: %v\n%s", err, rec.Body.String())
	}
	snake := regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	var check func(where string, v any)
	check = func(where string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, inner := range v {
				if where != "slots" && !snake.MatchString(k) { // slots is keyed by database name
					t.Errorf("/passes: key %q in %s is not snake_case", k, where)
				}
				check(k, inner)
			}
		case []any:
			for _, inner := range v {
				check(where, inner)
			}
		}
	}
	check("the body", body)
	list, _ := body["passes"].([]any)
	if len(list) != 1 {
		t.Fatalf("/passes lists %v", body["passes"])
	}
	p := list[0].(map[string]any)
	for _, key := range []string{"name", "state", "sweeps", "consecutive_failures", "total_rows", "degraded", "drift"} {
		if _, ok := p[key]; !ok {
			t.Errorf("/passes: the pass has no %q: %v", key, p)
		}
	}
	if p["name"] != "noop" || p["state"] != "waiting" {
		t.Errorf("/passes: pass %v", p)
	}
}

// /passes carries the expired partitions a pass's last sweep left attached and why,
// and 0 with no reason for a pass that left none.
func TestPassesExpiredPartitionsLeft(t *testing.T) {
	t.Parallel()
	body := passesOf(actors.Status{Passes: []actors.PassStatus{
		{Name: "events", ExpiredPartitionsLeft: 3, ExpiredPartitionsReason: "contended: partition contended: lock timeout"},
		{Name: "orders"},
	}})
	raw, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	var got struct{ Passes []map[string]any }
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	events, orders := got.Passes[0], got.Passes[1]
	if events["expired_partitions_left"] != 3.0 || events["expired_partitions_reason"] != "contended: partition contended: lock timeout" {
		t.Errorf("events: %v", events)
	}
	if _, ok := orders["expired_partitions_reason"]; orders["expired_partitions_left"] != 0.0 || ok {
		t.Errorf("orders: %v; want 0 left and no reason", orders)
	}
}
