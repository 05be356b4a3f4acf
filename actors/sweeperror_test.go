package actors_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/retentionkit/retention/actors"
)

func TestSweepErrorNamesThePassOnce(t *testing.T) {
	t.Parallel()
	boom := errors.New("connection reset")
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"the pass's own prefix", fmt.Errorf("pass %q: delete batch: %w", "events", boom), `pass "events" sweep 2: delete batch: connection reset`},
		{"no prefix", boom, `pass "events" sweep 2: connection reset`},
		{"another pass named", fmt.Errorf("pass %q: %w", "other", boom), `pass "events" sweep 2: pass "other": connection reset`},
		{"a prefix of the name", fmt.Errorf("pass %q: %w", "event", boom), `pass "events" sweep 2: pass "event": connection reset`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := &actors.SweepError{Pass: "events", Sweep: 2, Err: tc.err}
			if got := err.Error(); got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
			if !errors.Is(err, boom) {
				t.Fatal("the cause is lost")
			}
		})
	}
}
