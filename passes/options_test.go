package passes_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/retentionkit/retention/core"
	"github.com/retentionkit/retention/passes"
)

func TestDefaultOptions(t *testing.T) {
	o := passes.DefaultOptions()
	if o.RetentionPeriod != nil || o.BatchSize != 500 || o.BatchDelay != 0 || o.SweepInterval != time.Hour ||
		o.MaxStartupStagger != time.Minute || o.MaxBatchesPerSweep != 100 || o.BatchTimeout != time.Minute {
		t.Fatalf("DefaultOptions = %+v", o)
	}
	if o.Enabled() {
		t.Fatal("the defaults sweep: deleting must be asked for")
	}
	if err := o.Validate("p"); err != nil {
		t.Fatalf("defaults invalid: %v", err)
	}
}

func TestEffectiveInterval(t *testing.T) {
	tests := []struct {
		retention *time.Duration
		interval  time.Duration
		want      time.Duration
	}{
		{nil, time.Hour, time.Hour},
		{passes.Retain(10 * time.Minute), time.Hour, 10 * time.Minute},
		{passes.Retain(30 * 24 * time.Hour), time.Hour, time.Hour},
		{passes.Retain(time.Hour), time.Hour, time.Hour},
	}
	for _, tc := range tests {
		o := passes.Options{RetentionPeriod: tc.retention, SweepInterval: tc.interval}
		if got := o.EffectiveInterval(); got != tc.want {
			t.Errorf("EffectiveInterval(%v, %v) = %v, want %v", tc.retention, tc.interval, got, tc.want)
		}
	}
}

func TestValidateReportsEveryProblemNamingThePass(t *testing.T) {
	o := passes.Options{
		RetentionPeriod: passes.Retain(-time.Hour), BatchSize: 0, BatchDelay: -1, SweepInterval: 0,
		MaxStartupStagger: -1, MaxBatchesPerSweep: -1, BatchTimeout: -1, Pacing: "fast", MaxReplicaLag: -1,
	}
	err := o.Validate("audit-log")
	var ve *core.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("Validate = %v, want a *core.ValidationError", err)
	}
	want := []string{"retention_period", "batch_size", "batch_delay", "sweep_interval", "max_startup_stagger", "max_batches_per_sweep", "batch_timeout", "pacing", "max_replica_lag"}
	if len(ve.Fields) != len(want) {
		t.Fatalf("fields = %v, want %v", ve.Fields, want)
	}
	for _, f := range want {
		msgs := ve.Fields[f]
		if len(msgs) != 1 || !strings.Contains(msgs[0], `pass "audit-log"`) || !strings.Contains(msgs[0], f) {
			t.Errorf("field %s: %v", f, msgs)
		}
	}
	if err := (passes.DefaultOptions()).Validate(""); err == nil {
		t.Error("an empty name is valid")
	}
}

type auditPass struct{}

func (auditPass) PurgeBatch(context.Context, int, time.Time) (int, error) { return 0, nil }

func TestNameFor(t *testing.T) {
	want := "github.com/retentionkit/retention/passes_test.auditPass"
	if got := passes.NameFor[auditPass](); got != want {
		t.Errorf("NameFor[auditPass] = %q, want %q", got, want)
	}
	if got := passes.NameFor[*auditPass](); got != want {
		t.Errorf("NameFor[*auditPass] = %q, want %q", got, want)
	}
}

func TestStaggerOffset(t *testing.T) {
	// FNV-1a 64 of "a" is 0xaf63dc4c8601ec8c; of "" the offset basis 0xcbf29ce484222325.
	if got, want := passes.StaggerOffset("a", time.Hour), time.Duration(0xaf63dc4c8601ec8c%uint64(time.Hour)); got != want {
		t.Errorf(`StaggerOffset("a", 1h) = %v, want %v`, got, want)
	}
	if got, want := passes.StaggerOffset("", time.Hour), time.Duration(0xcbf29ce484222325%uint64(time.Hour)); got != want {
		t.Errorf(`StaggerOffset("", 1h) = %v, want %v`, got, want)
	}
	if passes.StaggerOffset("a", 0) != 0 || passes.StaggerOffset("a", -time.Second) != 0 {
		t.Error("a zero window must start at once")
	}
	seen := map[time.Duration]string{}
	for _, name := range []string{"audit-log", "sessions", "outbox", "job-history", "ünïcode"} {
		d := passes.StaggerOffset(name, time.Minute)
		if d != passes.StaggerOffset(name, time.Minute) {
			t.Fatalf("%s: not deterministic", name)
		}
		if d < 0 || d >= time.Minute {
			t.Fatalf("%s: offset %v outside the window", name, d)
		}
		if other, dup := seen[d]; dup {
			t.Fatalf("%s and %s share offset %v", name, other, d)
		}
		seen[d] = name
	}
}

func TestRegistry(t *testing.T) {
	var g passes.Registry
	reg := passes.Registration{Name: "p", New: passes.Reuse(auditPass{}), Options: passes.DefaultOptions()}
	if err := g.Add(reg); err != nil {
		t.Fatal(err)
	}
	var dup *passes.DuplicateNameError
	if err := g.Add(reg); !errors.As(err, &dup) || dup.Name != "p" {
		t.Fatalf("second Add = %v", err)
	}
	if err := g.Add(passes.Registration{Name: "q"}); err != nil {
		t.Fatal(err)
	}
	if len(g.All()) != 2 || g.Lookup("q") == nil || g.Lookup("x") != nil {
		t.Fatalf("All = %v", g.All())
	}
	err := g.Validate()
	if err == nil || !strings.Contains(err.Error(), `pass "q"`) {
		t.Fatalf("Validate = %v, want the factory-less pass named", err)
	}
	if reg.TargetKey() != "p" || reg.DatabaseName() != passes.DefaultDatabase {
		t.Fatalf("defaults: target %q, database %q", reg.TargetKey(), reg.DatabaseName())
	}
}

type recordingReporter struct {
	keys []any
	more int
}

func (r *recordingReporter) RowSkipped(key any, _ error) { r.keys = append(r.keys, key) }
func (r *recordingReporter) MoreWaiting()                { r.more++ }

func TestBatchReporter(t *testing.T) {
	r := &recordingReporter{}
	ctx := passes.WithBatchReporter(context.Background(), r)
	passes.ReportSkipped(ctx, 7, errors.New("fk"))
	passes.ReportMoreWaiting(ctx)
	passes.ReportSkipped(context.Background(), 8, errors.New("nobody listens"))
	passes.ReportMoreWaiting(context.Background())
	if len(r.keys) != 1 || r.keys[0] != 7 || r.more != 1 {
		t.Fatalf("reported %v, more %d", r.keys, r.more)
	}
}

// Cutoff is now minus the retention period, and with no retention period the zero
// time, which no row predates: a caller that skipped Enabled must not get now (which
// every row predates) and delete everything.
func TestOptionsCutoff(t *testing.T) {
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	o := passes.DefaultOptions()
	o.RetentionPeriod = passes.Retain(48 * time.Hour)
	if got, want := o.Cutoff(now), time.Date(2026, 3, 8, 12, 0, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("Cutoff with 48h = %v, want %v", got, want)
	}
	o.RetentionPeriod = nil
	if got := o.Cutoff(now); !got.IsZero() {
		t.Errorf("Cutoff with no retention = %v, want the zero time", got)
	}
}
