package ui_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/retentionkit/retention/node/ui"
)

// BenchmarkPassesPage renders the passes page (whole, and the live block a refresh
// fetches) of a node with 10 and 1,000 passes, from the runtime's status and a SQLite
// ledger's last runs: the server's share of a page load.
func BenchmarkPassesPage(b *testing.B) {
	for _, n := range []int{10, 1000} {
		names := make([]string, n)
		for i := range names {
			names[i] = fmt.Sprintf("pass-%04d", i)
		}
		rt := startedRuntime(b, names...)
		l := sqliteLedger(b)
		h, err := ui.New(ui.Config{Runtime: rt, Ledger: l})
		if err != nil {
			b.Fatal(err)
		}
		for _, path := range []string{"/", "/?fragment=1"} {
			b.Run(fmt.Sprintf("passes=%d/%s", n, map[string]string{"/": "page", "/?fragment=1": "fragment"}[path]), func(b *testing.B) {
				var bytes int
				for b.Loop() {
					rec := httptest.NewRecorder()
					req := httptest.NewRequest(http.MethodGet, path, nil)
					req.RemoteAddr = local
					h.ServeHTTP(rec, req)
					if rec.Code != http.StatusOK {
						b.Fatalf("%d", rec.Code)
					}
					bytes = rec.Body.Len()
				}
				b.ReportMetric(float64(bytes), "bytes/page")
			})
		}
	}
}
