package metrics

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sirupsen/logrus"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/node/buildinfo"
	"github.com/retentionkit/retention/passes"
)

func runtimeWith(t *testing.T, names ...string) *actors.Runtime {
	t.Helper()
	quiet := logrus.New()
	quiet.SetOutput(io.Discard)
	rt := actors.New(actors.Config{Logger: quiet})
	opts := passes.DefaultOptions()
	opts.RetentionPeriod, opts.SweepInterval = passes.Retain(48*time.Hour), 2*time.Hour
	purge := passes.PassFunc(func(context.Context, int, time.Time) (int, error) { return 0, nil })
	for _, n := range names {
		if err := rt.Register(passes.Registration{Name: n, New: passes.Reuse(purge), Options: opts}); err != nil {
			t.Fatal(err)
		}
	}
	return rt
}

// Register creates every series of every pass before any event, and the settings and
// build info gauges say what they should.
func TestRegisterStartsEverySeriesAtZero(t *testing.T) {
	t.Parallel()
	rt := runtimeWith(t, "a", "b")
	reg := prometheus.NewPedanticRegistry()
	build := buildinfo.Info{Version: "v9.9.9", Revision: "abc", GoVersion: "go1.26.8"}
	if err := NewObserver().Register(reg, rt, Options{ReadyAfterFailures: 3, Build: &build}); err != nil {
		t.Fatal(err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, mf := range mfs {
		count[mf.GetName()] = len(mf.GetMetric())
	}
	for name, want := range map[string]int{
		"retention_rows_deleted_total": 2, "retention_rows_skipped_total": 2, "retention_batches_total": 2,
		"retention_failures_total": 2, "retention_restarts_total": 2, "retention_sweeps_total": 2 * 8,
		"retention_batch_duration_seconds": 2, "retention_last_success_timestamp_seconds": 2,
		"retention_consecutive_failures": 2, "retention_pass_retention_seconds": 2, "retention_pass_interval_seconds": 2,
		"retention_build_info": 1, "retention_pass_degraded": 2 * 3, "retention_slots_in_use": 1, "retention_lock_denials_total": 2,
	} {
		if got := count[name]; got != want {
			t.Errorf("%s: %d series, want %d", name, got, want)
		}
	}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			v := m.GetCounter().GetValue() + m.GetGauge().GetValue() + float64(m.GetHistogram().GetSampleCount())
			switch mf.GetName() {
			case "retention_build_info":
				if v != 1 || len(m.GetLabel()) != 3 || m.GetLabel()[2].GetValue() != "v9.9.9" {
					t.Errorf("build info %v = %v", m.GetLabel(), v)
				}
			case "retention_pass_retention_seconds":
				if v != 48*3600 {
					t.Errorf("retention seconds = %v", v)
				}
			case "retention_pass_setting_batch_size":
				if v != float64(passes.DefaultBatchSize) {
					t.Errorf("batch size = %v", v)
				}
			case "retention_pass_interval_seconds":
				if v != 2*3600 {
					t.Errorf("interval seconds = %v", v)
				}
			default:
				if v != 0 {
					t.Errorf("%s%v = %v before any event, want 0", mf.GetName(), m.GetLabel(), v)
				}
			}
		}
	}
	// A second registration on the same registry is an error, not a panic: a service
	// wiring twice hears about it.
	if err := NewObserver().Register(reg, rt, Options{}); err == nil {
		t.Fatal("registering the metrics twice on one registry did not fail")
	}
}

// A sweep that ran elsewhere counts as a lock denial and under its own reason, and is
// not a success: the last-success gauge stays where it was.
func TestASweepElsewhereCountsADenialNotASuccess(t *testing.T) {
	t.Parallel()
	rt := runtimeWith(t, "a")
	reg := prometheus.NewPedanticRegistry()
	o := NewObserver()
	if err := o.Register(reg, rt, Options{ReadyAfterFailures: 3}); err != nil {
		t.Fatal(err)
	}
	at := time.Unix(1_800_000_000, 0)
	for range 2 {
		_ = o.Observe(actors.SweepDone{Name: "a", Reason: actors.Elsewhere, At: at})
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			key := mf.GetName()
			for _, l := range m.GetLabel() {
				if l.GetName() == "reason" {
					key += "/" + l.GetValue()
				}
			}
			got[key] += m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	for key, want := range map[string]float64{
		"retention_lock_denials_total": 2, "retention_sweeps_total/elsewhere": 2,
		"retention_sweeps_total/drained": 0, "retention_last_success_timestamp_seconds": 0, "retention_failures_total": 0,
	} {
		if got[key] != want {
			t.Errorf("%s = %v, want %v", key, got[key], want)
		}
	}
}
