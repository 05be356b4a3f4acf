package actortest_test

import (
	"fmt"
	"os"
	"slices"
	"testing"
)

// exampleT stands in for a test's *testing.T in the runnable examples, which get none:
// it keeps cleanups until Close, makes temporary directories, and prints a failure
// (so an example whose assertion fails shows it in its output) instead of stopping.
type exampleT struct {
	testing.TB // nil: a method the kit does not call panics
	cleanups   []func()
	failed     bool
}

func newExampleT() *exampleT { return &exampleT{} }

func (e *exampleT) Helper()             {}
func (e *exampleT) Name() string        { return "Example" }
func (e *exampleT) Failed() bool        { return e.failed }
func (e *exampleT) Cleanup(f func())    { e.cleanups = append(e.cleanups, f) }
func (e *exampleT) Logf(string, ...any) {}

func (e *exampleT) Fatalf(format string, args ...any) {
	e.failed = true
	fmt.Printf("FAIL: "+format+"\n", args...)
}

func (e *exampleT) TempDir() string {
	dir, err := os.MkdirTemp("", "actortest-example")
	if err != nil {
		panic(err)
	}
	e.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

// Close runs the cleanups, last first, as the testing package does.
func (e *exampleT) Close() {
	for _, f := range slices.Backward(e.cleanups) {
		f()
	}
}
