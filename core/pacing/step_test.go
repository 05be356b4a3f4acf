package pacing

import (
	"fmt"
	"testing"
	"time"
)

// The step contract: the load surges (its latency rises, and rises more while the
// sweep deletes) for 12 s, five times, 30 s apart. Each time the surge must be seen
// within a second (a back-off naming the signal), the sweep's rate must fall below half
// its rate before the surge within two and stay at its floor until the surge ends, and
// within fifteen seconds of the surge's end it must be back at 80% of it. The bounds
// are checked at every decision (world.run).

const (
	surgeEvery = 30 * time.Second
	surgeFor   = 12 * time.Second
	firstSurge = 20 * time.Second
	surges     = 5
)

// surging reports whether at falls inside one of the surges.
func surging(at time.Duration) bool {
	if at < firstSurge || at >= firstSurge+surges*surgeEvery {
		return false
	}
	return (at-firstSurge)%surgeEvery < surgeFor
}

// surgeLatency is a signal that is base normally; during a surge it is 3 x base when
// the sweep holds back (the surge alone) and 8 x base while it deletes (the surge and
// the sweep's harm on top of it).
func surgeLatency(base time.Duration) func(at time.Duration, learning bool) time.Duration {
	return func(at time.Duration, learning bool) time.Duration {
		switch {
		case !surging(at):
			return base
		case learning:
			return 3 * base
		default:
			return 8 * base
		}
	}
}

func TestStepContract(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		want Reason
		// set scripts the signal that sees the surge; the other stays flat.
		set func(w *world)
		// baseline is the scripted signal's baseline in State.
		baseline func(State) time.Duration
		base     time.Duration
	}{
		{"read probe", ReasonProbe, func(w *world) { w.probe = surgeLatency(time.Millisecond) },
			func(s State) time.Duration { return s.Baseline }, time.Millisecond},
		{"commit probe", ReasonCommit, func(w *world) {
			w.commit = surgeLatency(3 * time.Millisecond)
		}, func(s State) time.Duration { return s.CommitBaseline }, 3 * time.Millisecond},
		// Busy sessions in the world's unit: the surge's 3 x and 8 x of a baseline of 2.
		{"busy sessions", ReasonLoad, func(w *world) {
			lat := surgeLatency(2 * time.Millisecond)
			w.busy = func(at time.Duration, learning bool) int { return int(lat(at, learning) / time.Millisecond) }
		}, func(s State) time.Duration { return time.Duration(s.BusyBaseline) * time.Millisecond }, 2 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, Config{MaxBatch: 500})
			tc.set(w)
			// A cheap batch, so the sweep's rate is worth cutting: 2ms for 160 rows.
			// Each surge ends with the baseline the load had before it: one learned
			// inside the surge would let the sweep grow back into it.
			for i := range surges {
				w.run(firstSurge + time.Duration(i)*surgeEvery + surgeFor)
				if got := tc.baseline(w.c.State(w.clk.Now())); got != tc.base {
					t.Errorf("surge %d: baseline %v at its end, want the %v learned before it", i+1, got, tc.base)
				}
			}
			w.run(firstSurge + surges*surgeEvery)
			for i := range surges {
				from := firstSurge + time.Duration(i)*surgeEvery
				to := from + surgeFor
				before := w.rate(from-4*time.Second, from)
				seen := w.changeAfter(from, tc.want)
				cut := w.when(from, to, func(r float64) bool { return r < before/2 })
				back := w.when(to, from+surgeEvery, func(r float64) bool { return r >= 0.8*before })
				t.Logf("surge %d: before %.0f rows/s; seen after %v, below half after %v, back at 80%% after %v", i+1, before, seen, cut, back)
				if before < 5*DefaultStartRate {
					t.Errorf("surge %d: only %.0f rows/s before it: nothing to cut", i+1, before)
				}
				if seen < 0 || seen > time.Second {
					t.Errorf("surge %d: seen after %v, want a %s back-off within 1s", i+1, seen, tc.want)
				}
				if cut < 0 || cut > 2*time.Second {
					t.Errorf("surge %d: below half of %.0f rows/s after %v, want within 2s", i+1, before, cut)
				}
				if back < 0 || back > 15*time.Second {
					t.Errorf("surge %d: back at 80%% of %.0f rows/s after %v, want within 15s", i+1, before, back)
				}
				// During the surge the sweep stays at its floor: the surge alone keeps the
				// signal over its limit, and the baseline is not re-learned inside it.
				if during := w.rate(from+2*time.Second, to); during > 2*DefaultMinRate {
					t.Errorf("surge %d: %.0f rows/s during it, want about the floor of %d", i+1, during, DefaultMinRate)
				}
			}
		})
	}
}

// changeAfter returns how long after from the first change with reason r was made,
// or -1.
func (w *world) changeAfter(from time.Duration, r Reason) time.Duration {
	for _, c := range w.changesAt {
		if c.at >= from && c.reason == r {
			return c.at - from
		}
	}
	return -1
}

// TestSlowStartAfterAQuietPeriod: after a spell of cuts the rate is held until the
// signals have been healthy for QuietPeriod, then doubles up to half the rate the spell
// began at, then grows by RateStep.
func TestSlowStartAfterAQuietPeriod(t *testing.T) {
	t.Parallel()
	c := New(Config{MaxBatch: 5000, MinRate: 100})
	now := time.Unix(0, 0)
	c.rate, c.slowStart, c.mode = 40_000, false, ModeGrowing
	c.cut(now, 0, degradation{ReasonCommit, "scripted", 0})
	if got, want := c.rate, 20_000.0; got != want {
		t.Fatalf("rate %.0f after one cut from 40000, want %.0f", got, want)
	}
	for range 5 {
		now = now.Add(DefaultEvalEvery)
		c.cut(now, 0, degradation{ReasonCommit, "scripted", 0})
	}
	if c.rate != 625 || c.ssthresh != 20_000 {
		t.Fatalf("rate %.0f, threshold %.0f after six cuts, want 625 and 20000", c.rate, c.ssthresh)
	}
	var rates []string
	for range 12 {
		now = now.Add(DefaultEvalEvery)
		c.grow(now, 0)
		rates = append(rates, fmt.Sprint(c.rate))
	}
	// Held until a second after the last cut, doubled (at least by RateStep) up to the
	// threshold, then +RateStep.
	want := "[625 2625 5250 10500 20000 22000 24000 26000 28000 30000 32000 34000]"
	if got := fmt.Sprint(rates); got != want {
		t.Errorf("rates %s, want %s", got, want)
	}
}

// TestCutFactor: a signal a little over its limit halves the rate; one several times
// over cuts by as much as it is over, never below a tenth in one step.
func TestCutFactor(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ over, want float64 }{
		{0, 0.5},   // no ratio (blocked sessions)
		{1.2, 0.5}, // a sweep a little too fast
		{2, 0.5},
		{4, 0.25}, // a surge: four times over
		{50, minCutFactor},
	} {
		if got := cutFactor(DefaultBackoff, tc.over); got != tc.want {
			t.Errorf("cutFactor(%v, %v) = %v, want %v", DefaultBackoff, tc.over, got, tc.want)
		}
	}
}
