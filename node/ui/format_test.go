package ui

import (
	"fmt"
	"testing"
	"time"

	"github.com/retentionkit/retention/node/config"
	"github.com/retentionkit/retention/passes/ledger"
)

func TestShortDuration(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want string
	}{
		{450 * time.Millisecond, "450ms"},
		{12340 * time.Millisecond, "12.3s"},
		{3*time.Minute + 12*time.Second, "3m12s"},
		{5*time.Hour + 31*time.Minute + 50*time.Second, "5h32m"},
		{time.Hour, "1h"},
		{3 * time.Minute, "3m"},
		{10*time.Minute + 20*time.Second, "10m20s"},
		{2*time.Hour + 10*time.Second, "2h"},
		{30 * 24 * time.Hour, "30d"},
		{36 * time.Hour, "1d12h"},
		{30*24*time.Hour + 5*time.Minute, "30d"},
	} {
		if got := shortDuration(c.d); got != c.want {
			t.Errorf("shortDuration(%v) = %q, want %q", c.d, got, c.want)
		}
	}
}

// The edit form's value reads back as exactly the setting, so saving it unchanged
// changes nothing.
func TestExactDurationReadsBack(t *testing.T) {
	for _, d := range []time.Duration{time.Hour, 90 * time.Minute, 30 * 24 * time.Hour, 30*24*time.Hour + 5*time.Minute, 1500 * time.Millisecond} {
		got, err := config.ParseDuration(exactDuration(d))
		if err != nil || got != d {
			t.Errorf("%v written %q reads back %v, %v", d, exactDuration(d), got, err)
		}
	}
}

func TestNice(t *testing.T) {
	for v, want := range map[float64]float64{0: 1, 1: 1, 3: 5, 7: 10, 120: 200, 299: 500, 1000: 1000, 1001: 2000} {
		if got := nice(v); got != want {
			t.Errorf("nice(%v) = %v, want %v", v, got, want)
		}
	}
}

// The charts scale to the largest value on a round top line, put the sweeps oldest
// first from the left, and draw held rows on the backlog's scale.
func TestCharts(t *testing.T) {
	at := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	stop := "drained"
	sweeps := sweepChart([]ledger.Run{{ID: 1, StartTime: at, RowsDeleted: 300, StopReason: &stop}, {ID: 2, StartTime: at.Add(time.Hour), RowsDeleted: 0, State: ledger.Failed}})
	if sweeps.Top != "500" || len(sweeps.Bars) != 2 || sweeps.Bars[0].X >= sweeps.Bars[1].X || sweeps.Bars[0].X < chartLeft || !sweeps.Bars[1].Failed || sweeps.Bars[1].H != 1 {
		t.Errorf("sweeps = %+v", sweeps)
	}
	if want := chartTopPad + plotH - 300.0/500*plotH; sweeps.Bars[0].Y != want {
		t.Errorf("bar of 300 rows at y %v, want %v", sweeps.Bars[0].Y, want)
	}
	if ticks := fmt.Sprint(sweeps.Ticks); ticks != fmt.Sprintf("[{%v 0} {%v 250} {%v 500}]", chartTopPad+plotH, chartTopPad+plotH/2, chartTopPad) {
		t.Errorf("sweeps' y-axis = %s", ticks)
	}
	backlog := backlogChart([]ledger.BacklogSample{{At: at, Rows: 10, Held: 40}, {At: at.Add(time.Hour), Rows: 0, Held: 40}})
	if backlog.Top != "50" || backlog.Line != "76.0,142.8 716.0,176.0" || backlog.HeldLine != "76.0,43.2 716.0,43.2" {
		t.Errorf("backlog = %+v", backlog)
	}
	if figs := fmt.Sprint(backlog.Figures); figs != "[{now 0 deletable, 40 held} {highest 10 deletable} {lowest 0 deletable} {samples 2}]" {
		t.Errorf("backlog figures = %s", figs)
	}
	// A long history is drawn (and its values listed) with at most chartMaxPoints points,
	// the last among them; its figures use every sample.
	long := make([]ledger.BacklogSample, 5000)
	for i := range long {
		long[i] = ledger.BacklogSample{At: at.Add(time.Duration(i) * 30 * time.Second), Rows: int64(i)}
	}
	if c := backlogChart(long); len(c.Points) != chartMaxPoints || c.Points[len(c.Points)-1].Title != stamp(long[4999].At)+": 4999 rows deletable, 0 held" || len(c.Values) != chartMaxPoints || c.Figures[1].Value != "4,999 deletable" {
		t.Errorf("a history of 5,000 samples: %d points, last %q, %d values, figures %v", len(c.Points), c.Points[len(c.Points)-1].Title, len(c.Values), c.Figures)
	}
	if !sweepChart(nil).Empty || !backlogChart(nil).Empty {
		t.Error("no data is not an empty chart")
	}
}
