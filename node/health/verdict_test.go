package health_test

import (
	"testing"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/node/health"
)

// A pass failing its sweeps (supervision has not given up) degrades the verdict, as do
// drift and supervision; a status with no problem is Ready. The dashboard used to call
// only a supervision stop "degraded", so the failing case is the one that pins them.
func TestJudge(t *testing.T) {
	cases := []struct {
		name string
		pass actors.PassStatus
		want health.State
	}{
		{"healthy", actors.PassStatus{Name: "a"}, health.Ready},
		{"failing", actors.PassStatus{Name: "a", ConsecutiveFailures: 3}, health.Degraded},
		{"below threshold", actors.PassStatus{Name: "a", ConsecutiveFailures: 2}, health.Ready},
		{"drift", actors.PassStatus{Name: "a", Drift: true}, health.Degraded},
		{"given up", actors.PassStatus{Name: "a", Degraded: true}, health.Degraded},
	}
	for _, c := range cases {
		v := health.Judge(actors.Status{Passes: []actors.PassStatus{c.pass}}, 3)
		if v.State != c.want {
			t.Errorf("%s: Judge = %q, want %q", c.name, v.State, c.want)
		}
		if (v.State == health.Degraded) != (len(v.Problems) > 0) {
			t.Errorf("%s: state %q with %d problems", c.name, v.State, len(v.Problems))
		}
	}
}
