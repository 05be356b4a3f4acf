package ui_test

import (
	"fmt"
	"os"

	"go.uber.org/goleak"
)

// leakCheck turns a passing run into a failing one when a goroutine outlived the
// tests: they serve the dashboard and start runtimes, and a goroutine a test forgets
// to stop leaks into every later test. TestMain (browser_harness_test.go) calls it
// because that TestMain also builds and removes the binary.
func leakCheck(code int) int {
	if code != 0 {
		return code
	}
	// protoactor's dead-letter throttle leaves a timer goroutine that ends one throttle
	// interval after the last dead letter: not a leak of ours.
	if err := goleak.Find(goleak.IgnoreTopFunction("github.com/asynkron/protoactor-go/actor.NewDeadLetter.NewThrottle.func4.1")); err != nil {
		fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
		return 1
	}
	return code
}
