//go:build chaos

package chaos

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// guard bounds every wait for the node, so a hang fails its scenario instead of the
// suite; it is never a timing assertion.
const guard = 3 * time.Minute

// proc is one node process, its JSON log lines collected as they come.
type proc struct {
	t      *testing.T
	cmd    *exec.Cmd
	began  time.Time
	stdout bytes.Buffer // read only after exit

	mu      sync.Mutex
	logs    []map[string]any
	raw     []string
	changed chan struct{} // closed and replaced whenever a line arrives or the process ends
	exited  bool
	cursor  int // the next log line waitFor looks at
}

// start runs the node binary with args and JSON logs.
func start(t *testing.T, args ...string) *proc {
	t.Helper()
	p := &proc{t: t, changed: make(chan struct{}), began: time.Now()}
	p.cmd = exec.Command(the.bin, append(args, "--log-format", "json")...)
	p.cmd.Stdout = &p.stdout
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go p.read(bufio.NewScanner(stderr))
	t.Cleanup(func() {
		if !p.hasExited() {
			_ = p.cmd.Process.Kill()
			_ = p.cmd.Wait()
		}
	})
	return p
}

func (p *proc) read(sc *bufio.Scanner) {
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) != nil {
			m = nil
		}
		p.mu.Lock()
		p.raw = append(p.raw, line)
		if m != nil {
			p.logs = append(p.logs, m)
		}
		p.notify()
		p.mu.Unlock()
	}
	p.mu.Lock()
	p.exited = true
	p.notify()
	p.mu.Unlock()
}

func (p *proc) notify() {
	close(p.changed)
	p.changed = make(chan struct{})
}

func (p *proc) hasExited() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.exited
}

// waitFor waits for the next log line (after the last one waitFor returned) that
// matches, and returns it.
func (p *proc) waitFor(what string, match func(map[string]any) bool) map[string]any {
	p.t.Helper()
	deadline := time.After(guard)
	for {
		p.mu.Lock()
		for ; p.cursor < len(p.logs); p.cursor++ {
			if m := p.logs[p.cursor]; match(m) {
				p.cursor++
				p.mu.Unlock()
				return m
			}
		}
		exited, changed := p.exited, p.changed
		p.mu.Unlock()
		if exited {
			p.t.Fatalf("the node exited before %s:\n%s", what, p.output())
		}
		select {
		case <-changed:
		case <-deadline:
			p.t.Fatalf("no %s within %v:\n%s", what, guard, p.output())
		}
	}
}

// signal sends sig to the node.
func (p *proc) signal(sig syscall.Signal) {
	p.t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		p.t.Fatal(err)
	}
}

// wait waits for the node to exit and returns its exit code (-1 when a signal ended
// it). A data race the node's race detector reported, or a panic, fails the scenario.
func (p *proc) wait() int {
	p.t.Helper()
	deadline := time.After(guard)
	for {
		p.mu.Lock()
		exited, changed := p.exited, p.changed
		p.mu.Unlock()
		if exited { // stderr is at its end: read it all before Wait closes it
			break
		}
		select {
		case <-changed:
		case <-deadline:
			p.t.Errorf("the node did not exit within %v; killing it", guard)
			_ = p.cmd.Process.Kill()
			deadline = nil
		}
	}
	_ = p.cmd.Wait()
	if out := p.output(); strings.Contains(out, "WARNING: DATA RACE") {
		p.t.Errorf("the node reported a data race:\n%s", out)
	} else if strings.Contains(out, "\npanic: ") || strings.HasPrefix(out, "panic: ") {
		p.t.Errorf("the node panicked:\n%s", out)
	}
	return p.cmd.ProcessState.ExitCode()
}

// output is everything the node wrote to stderr, and to stdout once it exited.
func (p *proc) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := strings.Join(p.raw, "\n")
	if p.exited && p.cmd.ProcessState != nil {
		out = p.stdout.String() + out
	}
	return out
}

// logged returns every log line that matches.
func (p *proc) logged(match func(map[string]any) bool) []map[string]any {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []map[string]any
	for _, m := range p.logs {
		if match(m) {
			out = append(out, m)
		}
	}
	return out
}

// runToEnd runs the node with args and returns its exit code, stdout and stderr.
func runToEnd(t *testing.T, args ...string) (int, *proc) {
	t.Helper()
	p := start(t, args...)
	return p.wait(), p
}

// msg matches a log line with this message for this pass.
func msg(message, pass string) func(map[string]any) bool {
	return func(m map[string]any) bool { return m["msg"] == message && m["pass"] == pass }
}

// sweepDone matches the end of a sweep of pass (with reason, unless it is empty).
func sweepDone(pass, reason string) func(map[string]any) bool {
	return func(m map[string]any) bool {
		return m["msg"] == "sweep done" && m["pass"] == pass && (reason == "" || m["reason"] == reason)
	}
}

// trouble matches a warning or error about pass.
func trouble(pass string) func(map[string]any) bool {
	return func(m map[string]any) bool {
		return m["pass"] == pass && (m["level"] == "warning" || m["level"] == "error")
	}
}

// summaryRow returns the summary table's row of pass from a sweep's stdout:
// deleted, skipped, batches, sweeps, and the stop reason.
func summaryRow(t *testing.T, stdout, pass string) (deleted, skipped int, reason string) {
	t.Helper()
	for _, line := range strings.Split(stdout, "\n") {
		fields := strings.Fields(line)
		if len(fields) >= 7 && fields[0] == pass {
			if _, err := fmt.Sscan(fields[1]+" "+fields[2], &deleted, &skipped); err == nil {
				return deleted, skipped, fields[len(fields)-1]
			}
		}
	}
	t.Fatalf("no summary row for %s in:\n%s", pass, stdout)
	return 0, 0, ""
}

// verdict is the node's last word: the line it prints on stderr when a command fails
// ("retention: ..."), or "" when there is none.
func (p *proc) verdict() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := len(p.raw) - 1; i >= 0; i-- {
		if strings.HasPrefix(p.raw[i], "retention: ") {
			return p.raw[i]
		}
	}
	return ""
}

// names reports whether the node's verdict names the number n (as a whole number).
func (p *proc) names(n int) bool {
	return regexp.MustCompile(`(^|\D)` + strconv.Itoa(n) + `(\D|$)`).MatchString(p.verdict())
}

// observerFailed matches the line the node logs when an observer (the ledger's, say)
// could not record an event.
func observerFailed(m map[string]any) bool { return m["msg"] == "observer failed" }
