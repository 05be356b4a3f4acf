package harness

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/retentionkit/retention/node/admin"
)

// ExitFenced is the exit code of a node that fenced itself: it dropped out of the
// cluster's topology and stopped, so its process manager must start it again.
const ExitFenced = 3

// Node is one `retention run` process. Its stdout and stderr go to a log file (kept as
// an artifact); its JSON log lines are also kept in memory, so a scenario can wait for
// one.
type Node struct {
	Name    string // the harness's name for the process (n1, n2 ...), stable across restarts
	cmd     *exec.Cmd
	logPath string
	started time.Time

	mu      sync.Mutex
	lines   []map[string]any
	changed chan struct{} // closed and replaced on every line and at exit
	exited  bool
	code    int
	ended   time.Time
	member  string // the member id, once /cluster told it
	admin   string
}

// StartNode starts `bin run --config config` with JSON logs appended to logPath.
func StartNode(name, bin, config, logPath string) (*Node, error) {
	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(log, "---- harness: %s started at %s\n", name, time.Now().UTC().Format(time.RFC3339Nano))
	n := &Node{Name: name, logPath: logPath, changed: make(chan struct{})}
	n.cmd = exec.Command(bin, "run", "--config", config, "--log-format", "json")
	n.cmd.Stdout = log
	stderr, err := n.cmd.StderrPipe()
	if err != nil {
		log.Close()
		return nil, err
	}
	n.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := n.cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	n.started = time.Now()
	go n.read(stderr, log)
	return n, nil
}

func (n *Node) read(r io.Reader, log *os.File) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		fmt.Fprintln(log, line)
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) != nil {
			m = map[string]any{"raw": line}
		}
		n.mu.Lock()
		n.lines = append(n.lines, m)
		n.notify()
		n.mu.Unlock()
	}
	err := n.cmd.Wait()
	code := n.cmd.ProcessState.ExitCode()
	fmt.Fprintf(log, "---- harness: %s exited %d (%v) at %s\n", n.Name, code, err, time.Now().UTC().Format(time.RFC3339Nano))
	log.Close()
	n.mu.Lock()
	n.exited, n.code, n.ended = true, code, time.Now()
	n.notify()
	n.mu.Unlock()
}

func (n *Node) notify() {
	close(n.changed)
	n.changed = make(chan struct{})
}

// Started is when the process started.
func (n *Node) Started() time.Time { return n.started }

// PID is the process id.
func (n *Node) PID() int { return n.cmd.Process.Pid }

// Exited reports whether the process has ended, its exit code (-1 when a signal ended
// it) and when.
func (n *Node) Exited() (bool, int, time.Time) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.exited, n.code, n.ended
}

// Wait waits up to bound for the process to end and returns its exit code.
func (n *Node) Wait(ctx context.Context, bound time.Duration) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	for {
		n.mu.Lock()
		exited, code, changed := n.exited, n.code, n.changed
		n.mu.Unlock()
		if exited {
			return code, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return 0, fmt.Errorf("%s did not exit within %v", n.Name, bound)
		}
	}
}

// WaitLog waits up to bound for a log line that matches and returns it; it fails at
// once when the process ends first.
func (n *Node) WaitLog(ctx context.Context, bound time.Duration, what string, match func(map[string]any) bool) (map[string]any, error) {
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	seen := 0
	for {
		n.mu.Lock()
		for ; seen < len(n.lines); seen++ {
			if match(n.lines[seen]) {
				m := n.lines[seen]
				n.mu.Unlock()
				return m, nil
			}
		}
		exited, code, changed := n.exited, n.code, n.changed
		n.mu.Unlock()
		if exited {
			return nil, fmt.Errorf("%s exited %d before %s", n.Name, code, what)
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, fmt.Errorf("%s: no %s within %v", n.Name, what, bound)
		}
	}
}

// Logged returns the log lines that match.
func (n *Node) Logged(match func(map[string]any) bool) []map[string]any {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []map[string]any
	for _, m := range n.lines {
		if match(m) {
			out = append(out, m)
		}
	}
	return out
}

// Signal sends sig to the process.
func (n *Node) Signal(sig syscall.Signal) error {
	if err := n.cmd.Process.Signal(sig); err != nil {
		return fmt.Errorf("%s: %v: %w", n.Name, sig, err)
	}
	return nil
}

// Kill ends the process with SIGKILL (after SIGCONT, should it be frozen) unless it has
// ended already, and waits for it.
func (n *Node) Kill() {
	if exited, _, _ := n.Exited(); exited {
		return
	}
	_ = n.cmd.Process.Signal(syscall.SIGKILL)
	_ = n.cmd.Process.Signal(syscall.SIGCONT)
	_, _ = n.Wait(context.Background(), 10*time.Second)
}

// AdminAddr waits for the admin endpoint and returns its host:port.
func (n *Node) AdminAddr(ctx context.Context, bound time.Duration) (string, error) {
	n.mu.Lock()
	addr := n.admin
	n.mu.Unlock()
	if addr != "" {
		return addr, nil
	}
	m, err := n.WaitLog(ctx, bound, "the admin endpoint", func(m map[string]any) bool { return m["msg"] == "admin endpoint listening" })
	if err != nil {
		return "", err
	}
	addr = fmt.Sprint(m["addr"])
	n.mu.Lock()
	n.admin = addr
	n.mu.Unlock()
	return addr, nil
}

// Cluster is the node's GET /cluster.
func (n *Node) Cluster(ctx context.Context) (admin.ClusterView, error) {
	var v admin.ClusterView
	addr, err := n.AdminAddr(ctx, 30*time.Second)
	if err != nil {
		return v, err
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/cluster", nil)
	if err != nil {
		return v, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return v, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return v, fmt.Errorf("%s: GET /cluster: %s: %s", n.Name, resp.Status, strings.TrimSpace(string(body)))
	}
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		return v, fmt.Errorf("%s: GET /cluster: %w", n.Name, err)
	}
	return v, nil
}

// MemberID waits until /cluster names this node's member id and returns it.
func (n *Node) MemberID(ctx context.Context, bound time.Duration) (string, error) {
	n.mu.Lock()
	id := n.member
	n.mu.Unlock()
	if id != "" {
		return id, nil
	}
	err := PollWith(ctx, ViewEvery, bound, n.Name+"'s member id on /cluster", func() (bool, error) {
		if exited, code, _ := n.Exited(); exited {
			return false, fmt.Errorf("%s exited %d", n.Name, code)
		}
		v, err := n.Cluster(ctx)
		if err != nil {
			return false, err
		}
		if !v.Enabled || v.Member == nil || v.Member.ID == "" {
			return false, errors.New("/cluster names no member yet")
		}
		id = v.Member.ID
		return true, nil
	})
	if err != nil {
		return "", err
	}
	n.mu.Lock()
	n.member = id
	n.mu.Unlock()
	return id, nil
}

// Member is the member id MemberID found, or "" before.
func (n *Node) Member() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.member
}

// AppName is the application_name the node's sweep connections carry.
func (n *Node) AppName() string { return AppName(n.Member()) }

// AppName is the application_name of member's sweep connections.
func AppName(member string) string { return "retention:" + member }

// LogPath is the node's log file.
func (n *Node) LogPath() string { return n.logPath }
