package main

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/retentionkit/retention/actors"
)

func TestReadyzTurnsReadyOnceStarted(t *testing.T) {
	a := &admin{rt: actors.New(actors.Config{}), reg: prometheus.NewRegistry()}
	h := a.handler()
	get := func() int {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
		return rec.Code
	}
	if code := get(); code != http.StatusServiceUnavailable {
		t.Fatalf("/readyz before start = %d, want 503", code)
	}
	a.ready.Store(true)
	if code := get(); code != http.StatusOK {
		t.Fatalf("/readyz after start = %d, want 200", code)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("/healthz = %d", rec.Code)
	}
}
