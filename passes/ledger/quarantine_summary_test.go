package ledger_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/core/clock"
	"github.com/retentionkit/retention/passes"
)

// TestQuarantineSummaryIsLoggedWhenItChanges reads a pass's quarantine at the start of
// many sweeps, on a manual clock, while rows enter and leave it: the summary warning
// comes once per change of the count, not once per sweep, and an empty quarantine
// says nothing.
func TestQuarantineSummaryIsLoggedWhenItChanges(t *testing.T) {
	eachDB(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		l := migrated(t, db)
		clk := clock.NewManual(time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC))
		var warnings []string
		q := l.Quarantine(map[string]time.Duration{"orders": time.Hour}).WithClock(clk).WithWarnings(func(w string) { warnings = append(warnings, w) })
		sweeps := func(n int) {
			t.Helper()
			for range n {
				if _, err := q.Quarantined(ctx, "orders"); err != nil {
					t.Fatal(err)
				}
				clk.Advance(15 * time.Minute)
			}
		}
		hold := func(key int64) {
			t.Helper()
			if _, err := q.Hold(ctx, "orders", &passes.RowError{Key: []any{key}, Err: errors.New("violates foreign key")}); err != nil {
				t.Fatal(err)
			}
		}
		steps := []struct {
			what   string
			change func()
			want   []string
		}{
			{"an empty quarantine", func() {}, nil},
			{"a row enters", func() { hold(7) }, []string{"1 rows in quarantine for pass orders (0 due for another attempt in this sweep)"}},
			{"it fails again when due", func() { hold(7) }, nil},
			{"a second row enters", func() { hold(9) }, []string{"2 rows in quarantine for pass orders (0 due for another attempt in this sweep)"}},
			{"one is released", func() {
				if err := q.Release(ctx, "orders", []string{"[7]"}); err != nil {
					t.Fatal(err)
				}
			}, []string{"1 rows in quarantine for pass orders (1 due for another attempt in this sweep)"}}, // row 9 waited out its hour
			{"the last is released", func() {
				if err := q.Release(ctx, "orders", []string{"[9]"}); err != nil {
					t.Fatal(err)
				}
			}, nil},
		}
		for _, s := range steps {
			warnings = nil
			s.change()
			sweeps(6) // an hour and a half of sweeps every quarter of an hour
			if len(warnings) != len(s.want) || (len(s.want) > 0 && warnings[0] != s.want[0]) {
				t.Fatalf("%s: warnings over six sweeps = %q, want %q", s.what, warnings, s.want)
			}
		}
	})
}
