package passes_test

import (
	"strings"
	"testing"

	"github.com/retentionkit/retention/passes"
)

// The sweep session's settings, statement timeout and cancellation on the server are
// PostgreSQL's (the only driver that pins a session): passes/driver/postgres/sessions_test.go.

func TestSynchronousCommitValidated(t *testing.T) {
	spec := passes.TableSpec{Table: "t", Key: "id", Timestamp: "ts", SynchronousCommit: "sometimes"}
	err := spec.Validate("events")
	if err == nil || !strings.Contains(err.Error(), `pass "events": synchronous_commit must be one of off, local, remote_write, on, remote_apply, got `+"`sometimes`") {
		t.Fatalf("Validate = %v", err)
	}
}
