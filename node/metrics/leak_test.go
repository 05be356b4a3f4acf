package metrics

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests when a goroutine outlives them: these tests start runtimes and open databases, so
// a test that forgets to stop one leaks it into every later test and hides until
// production runs for days.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
