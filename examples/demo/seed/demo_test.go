package main

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMakeRunReachesACompletedSweep runs `make run` from the repository root, as a
// newcomer would, and waits for its first completed sweep of the audit log.
func TestMakeRunReachesACompletedSweep(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute) // a bound on a hang
	defer cancel()
	cmd := exec.CommandContext(ctx, "make", "run")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "RETENTION_ADMIN_TOKEN=")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	out, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = cmd.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
		_ = cmd.Wait()
	}()
	sc := bufio.NewScanner(out)
	var seen []string
	for sc.Scan() {
		line := sc.Text()
		seen = append(seen, line)
		if strings.Contains(line, `msg="sweep done"`) && strings.Contains(line, "pass=audit-log") {
			return
		}
	}
	t.Fatalf("make run ended without a completed audit-log sweep:\n%s", strings.Join(seen, "\n"))
}
