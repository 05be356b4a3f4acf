package actors

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
)

func TestLogObserverLevels(t *testing.T) {
	tests := []struct {
		event Event
		level string
		text  string
	}{
		{SweepDone{Name: "p", Rows: 12, Reason: Drained}, "info", "sweep done"},
		{BatchDone{Name: "p", Rows: 3}, "debug", "batch done"},
		{PassFailed{Name: "p", Err: errors.New("boom")}, "warning", "sweep failed"},
		{RowSkipped{Name: "p", Key: 42, Err: errors.New("fk")}, "warning", "row skipped"},
		{PassStopped{Name: "p", Degraded: true, Err: errors.New("boom")}, "error", "pass stopped by supervision"},
		{PassRestarted{Name: "p", Backoff: time.Second}, "info", "pass restarted"},
	}
	for _, tc := range tests {
		var buf bytes.Buffer
		logger := logrus.New()
		logger.SetOutput(&buf)
		logger.SetLevel(logrus.DebugLevel)
		if err := (&LogObserver{Logger: logger}).Observe(tc.event); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		if !strings.Contains(out, "level="+tc.level) || !strings.Contains(out, tc.text) || !strings.Contains(out, "pass=p") {
			t.Errorf("%T logged %q, want level %s and %q", tc.event, out, tc.level, tc.text)
		}
	}
}

func TestLogFailureReporterHidesErrorTextUnlessAsked(t *testing.T) {
	var buf bytes.Buffer
	logger := logrus.New()
	logger.SetOutput(&buf)
	secret := errors.New("row 17: ssn 123-45-6789")
	LogFailureReporter{Logger: logger}.ObserverFailed(LogObserver{}, secret)
	if out := buf.String(); strings.Contains(out, "6789") || !strings.Contains(out, "actors.LogObserver") || !strings.Contains(out, "*errors.errorString") {
		t.Fatalf("without details: %s", out)
	}
	buf.Reset()
	LogFailureReporter{Logger: logger, IncludeErrorDetails: true}.ObserverFailed(LogObserver{}, secret)
	if !strings.Contains(buf.String(), "6789") {
		t.Fatalf("with details: %s", buf.String())
	}
}
