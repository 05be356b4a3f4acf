package admin

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/passes"
)

func TestReadyzTurnsReadyOnceStarted(t *testing.T) {
	rt := actors.New(actors.Config{})
	opts := passes.DefaultOptions()
	opts.RetentionPeriod, opts.MaxStartupStagger = passes.Retain(24*time.Hour), 0
	if err := rt.Register(passes.Registration{Name: "noop", New: passes.Reuse(passes.PassFunc(func(context.Context, int, time.Time) (int, error) { return 0, nil })), Options: opts}); err != nil {
		t.Fatal(err)
	}
	h := New(Config{Runtime: rt, Gatherer: prometheus.NewRegistry()})
	get := func(path string) int {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
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
	if code := get("/healthz"); code != http.StatusServiceUnavailable {
		t.Fatalf("/healthz once the runtime stopped = %d, want 503", code)
	}
}
