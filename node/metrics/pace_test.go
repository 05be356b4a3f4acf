package metrics

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sirupsen/logrus"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/passes"
)

// An adaptive pass's pace series show the controller's choice once it sweeps; a fixed
// pass has them too, at zero.
func TestPaceSeriesForAdaptivePasses(t *testing.T) {
	t.Parallel()
	quiet := logrus.New()
	quiet.SetOutput(io.Discard)
	rt := actors.New(actors.Config{Logger: quiet})
	full := passes.PassFunc(func(_ context.Context, n int, _ time.Time) (int, error) { return n, nil })
	for _, name := range []string{"adaptive", "fixed"} {
		opts := passes.DefaultOptions()
		opts.RetentionPeriod, opts.MaxStartupStagger, opts.BatchSize = passes.Retain(time.Hour), 0, 200
		if name == "adaptive" {
			opts.Pacing = passes.PacingAdaptive
		}
		if err := rt.Register(passes.Registration{Name: name, New: passes.Reuse(full), Options: opts}); err != nil {
			t.Fatal(err)
		}
	}
	reg := prometheus.NewPedanticRegistry()
	if err := NewObserver().Register(reg, rt, Options{ReadyAfterFailures: 3}); err != nil {
		t.Fatal(err)
	}
	if err := rt.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer rt.Stop(context.Background())
	deadline := time.Now().Add(30 * time.Second)
	for {
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		series := map[string]map[string]float64{}
		for _, mf := range mfs {
			for _, m := range mf.GetMetric() {
				if len(m.GetLabel()) != 1 || m.GetLabel()[0].GetName() != "pass" {
					continue
				}
				if series[mf.GetName()] == nil {
					series[mf.GetName()] = map[string]float64{}
				}
				series[mf.GetName()][m.GetLabel()[0].GetValue()] = m.GetGauge().GetValue() + m.GetCounter().GetValue()
			}
		}
		batch := series["retention_pace_batch_size"]["adaptive"]
		if series["retention_pace_rate_rows_per_second"]["adaptive"] > 0 { // the controller has reported
			if batch < 1 || batch > 200 {
				t.Errorf("batch size %v outside [1, 200]", batch)
			}
			for _, name := range []string{"retention_pace_delay_seconds", "retention_pace_rate_rows_per_second", "retention_pace_probe_seconds",
				"retention_pace_probe_baseline_seconds", "retention_pace_replica_lag_seconds", "retention_pace_busy_sessions", "retention_pace_busy_sessions_baseline", "retention_pace_backing_off_seconds_total", "retention_pace_backoffs_total"} {
				if _, ok := series[name]["adaptive"]; !ok {
					t.Errorf("no %s for the adaptive pass", name)
				}
				if _, ok := series[name]["fixed"]; !ok {
					t.Errorf("no %s for the fixed pass", name)
				}
			}
			if series["retention_pace_rate_rows_per_second"]["adaptive"] <= 0 {
				t.Error("no rate")
			}
			if series["retention_pace_batch_size"]["fixed"] != 0 || series["retention_pace_rate_rows_per_second"]["fixed"] != 0 {
				t.Errorf("fixed pass: batch %v rate %v, want zeros",
					series["retention_pace_batch_size"]["fixed"], series["retention_pace_rate_rows_per_second"]["fixed"])
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("no pace series for the adaptive pass")
		}
		<-time.After(20 * time.Millisecond)
	}
}
