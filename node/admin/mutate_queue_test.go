package admin

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/retentionkit/retention/passes/dbtest"
	"github.com/retentionkit/retention/passes/ledger"
)

// In cluster mode a trigger is queued in the ledger for the pass's owner, whichever
// member answers it; the local runtime is not asked (here it is not even started).
func TestTriggerQueuedForTheOwner(t *testing.T) {
	db := dbtest.SQLite(t)
	if _, err := ledger.Migrate(context.Background(), db, "adm_"); err != nil {
		t.Fatal(err)
	}
	l, err := ledger.New(db, "adm_")
	if err != nil {
		t.Fatal(err)
	}
	h := New(Config{Runtime: noopRuntime(t), Ledger: l, Token: "t", QueueTriggers: true})
	post := func(name string) int {
		req := httptest.NewRequest(http.MethodPost, "/trigger/"+name, nil)
		req.Header.Set("Authorization", "Bearer t")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code
	}
	if code := post("noop"); code != http.StatusAccepted {
		t.Fatalf("POST /trigger/noop = %d, want 202", code)
	}
	if code := post("nope"); code != http.StatusNotFound {
		t.Fatalf("POST /trigger/nope = %d, want 404", code)
	}
	claims, err := l.ForNode("owner").ClaimWork(context.Background(), []string{"noop", "nope"}, 10, time.Now())
	if err != nil || len(claims) != 1 || claims[0].Pass != "noop" {
		t.Fatalf("queued = %+v, %v; want the one request for noop", claims, err)
	}
}
