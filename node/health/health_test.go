package health

import (
	"slices"
	"testing"

	"github.com/retentionkit/retention/actors"
)

func TestPassProblems(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		pass      actors.PassStatus
		threshold int
		want      []Reason
	}{
		{"healthy", actors.PassStatus{Name: "p"}, 3, nil},
		{"failing, below the threshold", actors.PassStatus{Name: "p", ConsecutiveFailures: 2}, 3, nil},
		{"failing, at the threshold", actors.PassStatus{Name: "p", ConsecutiveFailures: 3, LastError: "boom"}, 3, []Reason{FailingSweeps}},
		{"a threshold below 1 counts as 1", actors.PassStatus{Name: "p", ConsecutiveFailures: 1}, 0, []Reason{FailingSweeps}},
		{"a threshold below 1 leaves a healthy pass healthy", actors.PassStatus{Name: "p"}, 0, nil},
		{"stopped by supervision", actors.PassStatus{Name: "p", Degraded: true}, 3, []Reason{StoppedBySupervision}},
		{"drift", actors.PassStatus{Name: "p", Drift: true, DriftError: "no table", ConsecutiveFailures: 1}, 3, []Reason{ConfigurationDrift}},
		{"drift that kept failing", actors.PassStatus{Name: "p", Drift: true, ConsecutiveFailures: 3}, 3, []Reason{ConfigurationDrift, FailingSweeps}},
		{"everything", actors.PassStatus{Name: "p", Degraded: true, Drift: true, ConsecutiveFailures: 5}, 3, []Reason{StoppedBySupervision, ConfigurationDrift, FailingSweeps}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []Reason
			for _, p := range PassProblems(tt.pass, tt.threshold) {
				if p.Pass != tt.pass.Name || p.ConsecutiveFailures != tt.pass.ConsecutiveFailures {
					t.Errorf("problem %+v does not name the pass and its failures", p)
				}
				got = append(got, p.Reason)
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("reasons %v, want %v", got, tt.want)
			}
		})
	}
}

func TestProblemsCarryTheErrorThatExplainsThem(t *testing.T) {
	t.Parallel()
	st := actors.Status{Passes: []actors.PassStatus{
		{Name: "ok"},
		{Name: "drifting", Drift: true, DriftError: "table gone", LastError: "older"},
		{Name: "failing", ConsecutiveFailures: 4, LastError: "timeout"},
	}}
	got := Problems(st, 3)
	want := []Problem{
		{Pass: "drifting", Reason: ConfigurationDrift, Error: "table gone"},
		{Pass: "failing", Reason: FailingSweeps, Error: "timeout", ConsecutiveFailures: 4},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("Problems = %+v, want %+v", got, want)
	}
}
