package actors_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests when a goroutine outlives them: these tests start actor systems, pass actors and database pools, so
// a test that forgets to stop one leaks it into every later test and hides until
// production runs for days.
func TestMain(m *testing.M) {
	// protoactor's dead-letter throttle leaves a timer goroutine that ends one throttle
	// interval after the last dead letter, whatever the test does: not a leak of ours.
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("github.com/asynkron/protoactor-go/actor.NewDeadLetter.NewThrottle.func4.1"))
}
