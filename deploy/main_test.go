package deploy

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// binary is the retention binary built once by TestMain from ../cmd/node.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "retention-deploy")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "retention")
	if out, err := exec.Command("go", "build", "-o", binary, "../cmd/node").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// tool finds an external checker. Locally a missing one skips the test, loudly; under
// CI=true it fails it, so CI can never pass by not checking (deploy/check.sh installs
// them there).
func tool(t *testing.T, name, debianPackage string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err == nil {
		return path
	}
	msg := fmt.Sprintf("%s is not installed (Debian package %s; deploy/check.sh installs it as root with CI=true)", name, debianPackage)
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s: CI=true needs it", msg)
	}
	fmt.Fprintf(os.Stderr, "\n!!! SKIPPING %s: %s\n\n", t.Name(), msg)
	t.Skip(msg)
	return ""
}

// run runs a command with extra environment variables and returns its combined output
// and exit code.
func run(t *testing.T, env []string, name string, args ...string) (string, int) {
	t.Helper()
	return runIn(t, "", env, name, args...)
}

// runIn is run in the directory dir ("" for the test's own).
func runIn(t *testing.T, dir string, env []string, name string, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return out.String(), ee.ExitCode()
	}
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return out.String(), 0
}
