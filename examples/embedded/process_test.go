package main

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// build compiles the example as `go run` would, into the test's directory.
func build(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "embedded")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	return bin
}

// noEscapes fails when out holds an ANSI escape: output that is not a terminal is plain
// text, protoactor's lines included.
func noEscapes(t *testing.T, what string, out []byte) {
	t.Helper()
	if i := bytes.IndexByte(out, 0x1b); i >= 0 {
		t.Errorf("%s holds an ESC byte at %d (coloured output into a pipe):\n%q", what, i, out[max(i-80, 0):min(i+80, len(out))])
	}
}

// The example's single run (-once), as a process with its output in pipes: it prints
// the dashboard's address and the sweeps, exits 0, and nothing it or protoactor writes
// is coloured.
func TestOnceAsAProcess(t *testing.T) {
	cmd := exec.Command(build(t), "-once", "-addr", "127.0.0.1:0")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	if !regexp.MustCompile(`(?m)^dashboard: http://127\.0\.0\.1:\d+/retention/ui/ `).MatchString(stdout.String()) || !strings.Contains(stdout.String(), "outbox: deleted 857") {
		t.Errorf("stdout lacks the dashboard's address or the sweeps:\n%s", stdout.String())
	}
	noEscapes(t, "stdout", stdout.Bytes())
	noEscapes(t, "stderr", stderr.Bytes())
}

var dashboardLine = regexp.MustCompile(`^dashboard: (http://\S+/retention/ui/) `)

// Without -once the example serves its dashboard until interrupted, then stops the
// passes and exits 0.
func TestServesUntilInterrupted(t *testing.T) {
	cmd := exec.Command(build(t), "-addr", "127.0.0.1:0")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	lines := make(chan string, 100)
	var all bytes.Buffer
	go func() {
		sc := bufio.NewScanner(io.TeeReader(stdout, &all))
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var dashboard string
	timeout := time.After(2 * time.Minute) // a bound on a hang
	for serving := false; !serving; {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("the example exited before serving:\n%s", stderr.String())
			}
			if m := dashboardLine.FindStringSubmatch(l); m != nil {
				dashboard = m[1]
			}
			serving = l == "serving; Ctrl-C stops"
		case <-timeout:
			t.Fatal("the example never said it was serving")
		}
	}
	resp, err := http.Get(dashboard)
	if err != nil {
		t.Fatalf("GET %s: %v", dashboard, err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "outbox") {
		t.Errorf("GET %s: %d\n%.1000s", dashboard, resp.StatusCode, body)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	for range lines { // the rest of the output, up to the exit
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("after Ctrl-C: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(all.String(), "left: ") {
		t.Errorf("the passes' stop was not reported:\n%s", all.String())
	}
	noEscapes(t, "stderr", stderr.Bytes())
}
