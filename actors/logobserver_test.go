package actors

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
)

func TestLogObserverLevels(t *testing.T) {
	t.Parallel()
	tests := []struct {
		event Event
		level string
		text  string
	}{
		{SweepDone{Name: "p", Rows: 12, Reason: Drained}, "info", "sweep done"},
		{SweepDone{Name: "p", Reason: Elsewhere, Denied: errors.New(`"p" is running elsewhere: held by member m2`)}, "info", "held by member m2"},
		{BatchDone{Name: "p", Rows: 3}, "debug", "batch done"},
		{PassFailed{Name: "p", Err: errors.New("boom")}, "warning", "sweep failed"},
		{RowSkipped{Name: "p", Key: 42, Err: errors.New("fk")}, "debug", "row skipped"},
		{SweepDone{Name: "p", Reason: Held, HeldBy: map[string]int{"constraint export_job_audit_id_fkey on export_job": 7142, "in quarantine, not due": 3}}, "warning",
			"rows held in place, by cause: constraint export_job_audit_id_fkey on export_job: 7142; in quarantine, not due: 3\" held=7145"},
		{SweepDone{Name: "p", Reason: Held, HeldBy: map[string]int{"in quarantine, not due": 3}}, "info", "rows held in place, by cause: in quarantine, not due: 3"},
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

func TestLogFailureReporterLogsTheErrorText(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	logger := logrus.New()
	logger.SetOutput(&buf)
	failure := fmt.Errorf("ledger: finish run 7: %w", errors.New(`relation "retention_metadata" does not exist`))
	LogFailureReporter{Logger: logger}.ObserverFailed(LogObserver{}, failure)
	if out := buf.String(); !strings.Contains(out, "retention_metadata") || !strings.Contains(out, "actors.LogObserver") || !strings.Contains(out, "*fmt.wrapError") {
		t.Fatalf("logged %s, want the observer, the error type and the error text", out)
	}
	buf.Reset()
	secret := errors.New("connect postgres://app:hunter2@db/app: refused")
	LogFailureReporter{Logger: logger, Redact: func(err error) string { return strings.ReplaceAll(err.Error(), "hunter2", "xxxxx") }}.ObserverFailed(LogObserver{}, secret)
	if out := buf.String(); strings.Contains(out, "hunter2") || !strings.Contains(out, "refused") {
		t.Fatalf("with Redact: %s", out)
	}
}
