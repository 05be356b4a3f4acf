package node

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/retentionkit/retention/actors"
)

// fakeDrain drives a drainer on a clock of its own: each sweep takes a second, and the
// count answers from a script.
type fakeDrain struct {
	now  time.Time
	left []int
}

func (f *fakeDrain) drainer(bound time.Duration) *drainer {
	d := newDrainer(bound, func(context.Context, string, time.Time) (int, error) {
		n := f.left[0]
		if len(f.left) > 1 {
			f.left = f.left[1:]
		}
		return n, nil
	})
	d.now = func() time.Time { return f.now }
	return d
}

func TestDrainRetriesWithABackoffWithinItsBound(t *testing.T) {
	f := &fakeDrain{now: time.Unix(0, 0), left: []int{50}}
	d := f.drainer(10 * time.Second)
	var waits []time.Duration
	var v verdict
	for i := 0; i < 20; i++ {
		v = d.after(context.Background(), actors.SweepDone{Name: "audit-log", Reason: actors.Contended})
		if !v.again {
			break
		}
		waits = append(waits, v.wait)
		f.now = f.now.Add(v.wait + time.Second)
	}
	want := []time.Duration{250 * time.Millisecond, 500 * time.Millisecond, time.Second, 2 * time.Second}
	if len(waits) != len(want) {
		t.Fatalf("waits %v, want %v", waits, want)
	}
	for i := range want {
		if waits[i] != want[i] {
			t.Fatalf("waits %v, want %v", waits, want)
		}
	}
	if v.err == nil || !strings.Contains(v.err.Error(), "audit-log: 50 expired rows left (locked by other transactions)") {
		t.Fatalf("gave up with %v", v.err)
	}
}

func TestDrainVerdicts(t *testing.T) {
	tests := []struct {
		name      string
		done      actors.SweepDone
		left      int
		again     bool
		wantError string
	}{
		{"batch limit: again at once", actors.SweepDone{Reason: actors.BatchLimit}, 10, true, ""},
		{"drained and counted empty", actors.SweepDone{Reason: actors.Drained}, 0, false, ""},
		{"drained with rows passed over", actors.SweepDone{Reason: actors.Drained}, 3, true, ""},
		{"cancelled with rows left", actors.SweepDone{Reason: actors.Cancelled}, 3, true, ""},
		{"only skipped rows left: done", actors.SweepDone{Reason: actors.Drained, Skipped: 2}, 2, false, ""},
		{"more left than skipped", actors.SweepDone{Reason: actors.Drained, Skipped: 2}, 3, true, ""},
		{"failed: says what it left", actors.SweepDone{Reason: actors.Failed}, 9, false, "9 expired rows left (the sweep failed)"},
		{"failed with nothing left", actors.SweepDone{Reason: actors.Failed}, 0, false, ""},
		{"stopped: the summary says so", actors.SweepDone{Reason: actors.Stopped}, 9, false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeDrain{now: time.Unix(0, 0), left: []int{tc.left}}
			tc.done.Name = "p"
			v := f.drainer(time.Minute).after(context.Background(), tc.done)
			if v.again != tc.again || (tc.wantError == "") != (v.err == nil) || (v.err != nil && !strings.Contains(v.err.Error(), tc.wantError)) {
				t.Fatalf("verdict %+v, want again %v, error %q", v, tc.again, tc.wantError)
			}
		})
	}
}

func TestADrainWhoseSweepsDeleteStartsItsBoundAfresh(t *testing.T) {
	f := &fakeDrain{now: time.Unix(0, 0), left: []int{50}}
	d := f.drainer(2 * time.Second)
	for i := 0; i < 10; i++ { // ten sweeps each deleting a row: never gives up
		v := d.after(context.Background(), actors.SweepDone{Name: "p", Reason: actors.Contended, Rows: 1})
		if !v.again || v.wait != drainBackoffStart {
			t.Fatalf("sweep %d: verdict %+v", i, v)
		}
		f.now = f.now.Add(time.Second)
	}
	if v := d.after(context.Background(), actors.SweepDone{Name: "p", Reason: actors.Contended}); !v.again {
		t.Fatalf("the first sweep without progress gave up: %+v", v)
	}
}

func TestADrainLeavingOnlyQuarantinedRowsIsDone(t *testing.T) {
	f := &fakeDrain{now: time.Unix(0, 0), left: []int{2}}
	d := f.drainer(time.Minute)
	quarantined := 1
	d.kept = func(context.Context, string) (int, error) { return quarantined, nil }
	if v := d.after(context.Background(), actors.SweepDone{Name: "p", Reason: actors.Drained}); !v.again {
		t.Fatalf("2 rows left, 1 in quarantine: verdict %+v, want another sweep", v)
	}
	quarantined = 2
	if v := d.after(context.Background(), actors.SweepDone{Name: "p", Reason: actors.Drained}); v.again || v.err != nil || v.kept != 2 {
		t.Fatalf("2 rows left, both in quarantine: verdict %+v, want done keeping 2", v)
	}
}
