package actors_test

import (
	"errors"
	"io"
	"testing"

	"github.com/sirupsen/logrus"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/core"
)

// A request to a runtime that was never started matches ErrNotRunning (what the cluster
// checks to stay quiet at shutdown) and still reads as a business-rule error (what the
// admin API maps to 409), so neither caller has to match the message.
func TestNotRunningIsOneSentinel(t *testing.T) {
	quiet := logrus.New()
	quiet.SetOutput(io.Discard)
	rt := actors.New(actors.Config{Logger: quiet})
	err := rt.Trigger("any")
	if !errors.Is(err, actors.ErrNotRunning) {
		t.Fatalf("Trigger before Start = %v, want ErrNotRunning", err)
	}
	var rule *core.BusinessRuleError
	if !errors.As(err, &rule) {
		t.Fatalf("Trigger before Start = %T, want a *core.BusinessRuleError inside", err)
	}
}
