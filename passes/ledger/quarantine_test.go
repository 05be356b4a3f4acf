package ledger_test

import (
	"testing"
	"time"

	"github.com/retentionkit/retention/passes/ledger"
)

func TestQuarantineBackoff(t *testing.T) {
	q := (&ledger.Ledger{}).Quarantine(map[string]time.Duration{"fast": 10 * time.Minute, "slow": 48 * time.Hour})
	cases := []struct {
		pass     string
		attempts int64
		want     time.Duration
	}{
		{"fast", 1, 10 * time.Minute},
		{"fast", 2, 20 * time.Minute},
		{"fast", 4, 80 * time.Minute},
		{"fast", 8, 1280 * time.Minute},
		{"fast", 9, 24 * time.Hour}, // 2560m capped
		{"fast", 1000, 24 * time.Hour},
		{"unknown", 1, ledger.DefaultQuarantineBackoff},
		{"unknown", 3, 4 * ledger.DefaultQuarantineBackoff},
		{"slow", 1, 24 * time.Hour}, // an interval over the cap is capped too
	}
	for _, c := range cases {
		if got := q.Backoff(c.pass, c.attempts); got != c.want {
			t.Errorf("Backoff(%s, %d) = %v, want %v", c.pass, c.attempts, got, c.want)
		}
	}
}

// The quarantine store is stated in the conformance suite (passes/passtest, quarantine
// area).
