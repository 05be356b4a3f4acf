package admin

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/retentionkit/retention/passes"
)

type fixedCluster struct {
	view ClusterView
	err  error
}

func (c fixedCluster) ClusterView(context.Context) (ClusterView, error) { return c.view, c.err }

func TestClusterRoute(t *testing.T) {
	t.Parallel()
	view := ClusterView{Enabled: true, Name: "c1", Member: &ClusterMember{ID: "m1", Address: "127.0.0.1:1"},
		Passes: []ClusterPass{{Name: "audit", Owner: "m1", LockHolder: &passes.LockHolderInfo{Member: "m1", PID: 42}}}}
	cases := []struct {
		name     string
		source   ClusterSource
		status   int
		enabled  bool
		lockedBy string
	}{
		{"off", nil, http.StatusOK, false, ""},
		{"on", fixedCluster{view: view}, http.StatusOK, true, "m1"},
		{"failing", fixedCluster{err: errors.New("etcd down")}, http.StatusServiceUnavailable, false, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := New(Config{Cluster: tc.source})
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/cluster", nil))
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tc.status, rec.Body)
			}
			if tc.status != http.StatusOK {
				return
			}
			var got ClusterView
			if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			if got.Enabled != tc.enabled {
				t.Fatalf("enabled %v, want %v", got.Enabled, tc.enabled)
			}
			if tc.lockedBy != "" && (len(got.Passes) != 1 || got.Passes[0].LockHolder.Member != tc.lockedBy) {
				t.Fatalf("passes %+v, want the lock held by %s", got.Passes, tc.lockedBy)
			}
		})
	}
}
