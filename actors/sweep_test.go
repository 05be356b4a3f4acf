package actors_test

import (
	"testing"
	"time"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/actors/actortest"
	"github.com/retentionkit/retention/passes"
)

func options(retention time.Duration, mutate ...func(*passes.Options)) passes.Options {
	o := passes.DefaultOptions()
	o.RetentionPeriod = passes.Retain(retention)
	for _, m := range mutate {
		m(&o)
	}
	return o
}

func TestFirstSweepAfterStaggerOffset(t *testing.T) {
	actortest.Run(t, actors.Config{}, func(h *actortest.Harness) {
		fake := actortest.NewFakePass(actortest.Rows(500), actortest.Rows(20))
		h.Register(passes.Registration{Name: "audit-log", New: fake.Factory(), Options: options(24 * time.Hour)})
		h.Start()
		offset := passes.StaggerOffset("audit-log", time.Minute)
		started := h.Expect(actortest.Is[actors.PassStarted]()).(actors.PassStarted)
		if started.Offset != offset {
			t.Fatalf("offset = %v, want %v", started.Offset, offset)
		}
		sw := h.ExpectWithin(2*time.Minute, actortest.Is[actors.SweepStarted]()).(actors.SweepStarted)
		if h.Elapsed() != offset {
			t.Fatalf("first sweep at %v, want %v", h.Elapsed(), offset)
		}
		if want := actortest.Epoch.Add(offset - 24*time.Hour); !sw.Cutoff.Equal(want) {
			t.Fatalf("cutoff = %v, want %v", sw.Cutoff, want)
		}
		done := h.Expect(actortest.Is[actors.SweepDone]()).(actors.SweepDone)
		if done.Rows != 520 || done.Batches != 2 || done.Reason != actors.Drained || done.WorkRemains {
			t.Fatalf("sweep done = %+v", done)
		}
		st := h.Status("audit-log")
		if st.State != actors.StateWaiting || st.TotalRows != 520 || !st.NextSweep.Equal(h.Now().Add(time.Hour)) {
			t.Fatalf("status = %+v", st)
		}
	})
}
