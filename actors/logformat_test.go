package actors

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
)

// TestJSONLogsGiveDurationsInSeconds logs the events whose lines carry durations through
// the log observer into a JSON logger and reads each duration back as seconds.
func TestJSONLogsGiveDurationsInSeconds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		event Event
		field string
		want  float64
	}{
		{SweepDone{Name: "p", Reason: Drained, Duration: 1500 * time.Millisecond}, "duration", 1.5},
		{BatchDone{Name: "p", Duration: 250 * time.Millisecond}, "duration", 0.25},
		{PassStarted{Name: "p", Offset: 90 * time.Second}, "offset", 90},
		{PassRestarted{Name: "p", Backoff: 2 * time.Second, Err: errors.New("boom")}, "backoff", 2},
	}
	for _, tc := range tests {
		var buf bytes.Buffer
		logger := logrus.New()
		logger.SetOutput(&buf)
		logger.SetLevel(logrus.DebugLevel)
		logger.SetFormatter(SecondsFormatter{Formatter: &logrus.JSONFormatter{}})
		if err := (&LogObserver{Logger: logger}).Observe(tc.event); err != nil {
			t.Fatal(err)
		}
		var line map[string]any
		if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
			t.Fatalf("%T: %v in %s", tc.event, err, buf.String())
		}
		if got, ok := line[tc.field].(float64); !ok || got != tc.want {
			t.Errorf("%T: %s = %v, want %v seconds (line %s)", tc.event, tc.field, line[tc.field], tc.want, buf.String())
		}
	}
}

// TestSecondsFormatterLeavesTheEntryAlone checks that the entry a hook or another
// formatter sees keeps its time.Duration.
func TestSecondsFormatterLeavesTheEntryAlone(t *testing.T) {
	t.Parallel()
	e := logrus.NewEntry(logrus.New()).WithFields(logrus.Fields{"wait": 3 * time.Second, "n": 2})
	out, err := SecondsFormatter{Formatter: &logrus.JSONFormatter{}}.Format(e)
	if err != nil {
		t.Fatal(err)
	}
	var line map[string]any
	if err := json.Unmarshal(out, &line); err != nil || line["wait"] != 3.0 || line["n"] != 2.0 {
		t.Fatalf("formatted %s (%v)", out, err)
	}
	if d, ok := e.Data["wait"].(time.Duration); !ok || d != 3*time.Second {
		t.Fatalf("the entry's field became %#v", e.Data["wait"])
	}
}
