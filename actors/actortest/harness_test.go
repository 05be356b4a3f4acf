package actortest_test

import "testing"

// TestExampleRun runs the harness example (example_run_test.go), so it cannot drift
// from what the harness does.
func TestExampleRun(t *testing.T) { testAuditSweeps(t) }
