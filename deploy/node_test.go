package deploy

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// node is a running `retention run` whose JSON log lines the test reads.
type node struct {
	cmd   *exec.Cmd
	lines chan map[string]any
	done  chan error
}

// startNode runs the binary with args (the Deployment's, with the config path replaced
// by e's) and e's variables; the test's end kills it if it still runs.
func startNode(t *testing.T, e k8sEnv, args ...string) *node {
	t.Helper()
	args = append([]string(nil), args...)
	for i := range args {
		if i > 0 && args[i-1] == "--config" {
			args[i] = e.path
		}
	}
	if !strings.Contains(strings.Join(args, " "), "--log-format json") {
		t.Fatalf("args %v: the test reads JSON logs", args)
	}
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), e.env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	n := &node{cmd: cmd, lines: make(chan map[string]any, 1000), done: make(chan error, 1)}
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				n.lines <- m
			}
		}
		close(n.lines)
		n.done <- cmd.Wait()
	}()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	return n
}

// waitLog waits for a log line with message msg; the timeout bounds a hang, it is not a
// timing assertion.
func (n *node) waitLog(t *testing.T, msg string) map[string]any {
	t.Helper()
	timeout := time.After(time.Minute)
	for {
		select {
		case m, ok := <-n.lines:
			if !ok {
				t.Fatalf("the node exited before logging %q", msg)
			}
			if m["msg"] == msg {
				return m
			}
		case <-timeout:
			t.Fatalf("no %q log line within a minute", msg)
		}
	}
}

// stop sends SIGTERM and returns the exit code.
func (n *node) stop(t *testing.T) int {
	t.Helper()
	if err := n.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	go func() {
		for range n.lines { // keep the pipe drained until the node exits
		}
	}()
	select {
	case err := <-n.done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(time.Minute):
		t.Fatal("the node did not stop within a minute of SIGTERM")
		return -1
	}
}
