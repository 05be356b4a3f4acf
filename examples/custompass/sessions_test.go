package main

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/actors/actortest"
	"github.com/retentionkit/retention/passes"
)

// TestExpiredSessions tests the pass the way a user would: registered on a real runtime
// on virtual time, with the harness moving the clock.
func TestExpiredSessions(t *testing.T) {
	actortest.Run(t, actors.Config{}, func(t *testing.T, h *actortest.Harness) {
		now := h.Now()
		store := NewStore(
			Session{ID: "a", LastSeen: now.Add(-3 * time.Hour)},
			Session{ID: "b", LastSeen: now.Add(-2 * time.Hour)},
			Session{ID: "c", LastSeen: now.Add(-90 * time.Minute)},
			Session{ID: "d", LastSeen: now.Add(-20 * time.Minute)}, // expires 10 minutes in
			Session{ID: "e", LastSeen: now},
		)
		opts := passes.DefaultOptions()
		opts.RetentionPeriod = passes.Retain(30 * time.Minute)
		opts.SweepInterval = 15 * time.Minute
		opts.BatchSize = 2
		opts.BatchDelay = time.Second
		h.Register(passes.Registration{Name: "expired-sessions", New: passes.Reuse(ExpiredSessions{Store: store}), Options: opts})
		h.Start()

		first := h.ExpectWithin(time.Minute+10*time.Second, actortest.Is[actors.SweepDone]()).(actors.SweepDone)
		if first.Rows != 3 || first.Batches != 2 {
			t.Fatalf("first sweep = %+v, want 3 rows in 2 batches", first)
		}
		if got := store.IDs(); !slices.Equal(got, []string{"d", "e"}) {
			t.Fatalf("after the first sweep: %v", got)
		}
		second := h.ExpectWithin(16*time.Minute, actortest.Is[actors.SweepDone]()).(actors.SweepDone)
		if second.Rows != 1 || !slices.Equal(store.IDs(), []string{"e"}) {
			t.Fatalf("second sweep = %+v, left %v", second, store.IDs())
		}
	})
}

// TestRun runs the example program on the wall clock.
func TestRun(t *testing.T) {
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := run(ctx, &out, time.Now()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "deleted 2 sessions in 3 batches; left: [bob dave]") {
		t.Fatalf("output:\n%s", out.String())
	}
}
