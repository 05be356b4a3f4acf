package admin

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/core/pacing"
	"github.com/retentionkit/retention/passes"
)

// /passes shows an adaptive pass's pace in seconds, and nothing for a fixed one.
func TestPassesShowThePace(t *testing.T) {
	t.Parallel()
	st := actors.Status{Passes: []actors.PassStatus{
		{Name: "a", Pace: &actors.PaceStatus{Pacing: passes.PacingAdaptive, Mode: pacing.ModeBackingOff, Batch: 120,
			Delay: 3 * time.Millisecond, Rate: 9000, Probe: 2 * time.Millisecond, Baseline: time.Millisecond, Cuts: 2,
			Busy: 4, BusyBaseline: 1.5,
			BackingOff: 1500 * time.Millisecond, LastReason: pacing.ReasonProbe}},
		{Name: "b"},
	}}
	raw, err := json.Marshal(passesOf(st))
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		Passes []map[string]any `json:"passes"`
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatal(err)
	}
	pace, ok := body.Passes[0]["pace"].(map[string]any)
	if !ok || pace["batch_size"] != 120.0 || pace["delay_seconds"] != 0.003 || pace["mode"] != "backing_off" ||
		pace["backing_off_seconds"] != 1.5 || pace["last_reason"] != "probe" || pace["pacing"] != "adaptive" ||
		pace["busy_sessions"] != 4.0 || pace["busy_sessions_baseline"] != 1.5 {
		t.Errorf("pace %v", body.Passes[0]["pace"])
	}
	if _, ok := body.Passes[1]["pace"]; ok || strings.Count(string(raw), `"pace"`) != 1 {
		t.Errorf("a fixed pass shows a pace: %s", raw)
	}
}
