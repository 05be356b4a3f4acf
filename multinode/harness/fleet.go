package harness

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
)

// BuildNode builds cmd/node into dir (without the race detector: the node in cluster
// mode runs protoactor's cluster, which races inside itself) and returns the binary.
// $MULTINODE_NODE_BIN names a binary to use instead.
func BuildNode(ctx context.Context, dir string) (string, error) {
	if bin := os.Getenv("MULTINODE_NODE_BIN"); bin != "" {
		return bin, nil
	}
	bin := filepath.Join(dir, "retention")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/retentionkit/retention/cmd/node")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build cmd/node: %w\n%s", err, out)
	}
	return bin, nil
}

// Fleet is a cluster of nodes on one etcd and one database, and their process
// manager: Supervise restarts a node that fenced itself (exit 3), as systemd's
// Restart=always or Kubernetes would. Nodes keep their harness names (n1, n2 ...)
// across restarts; each start is a new process and a new member.
type Fleet struct {
	Bin    string
	Dir    string // configs and logs
	Etcd   *Etcd
	Config string // the configuration every node runs
	// ConfigFor, when set, is each node's own configuration (written to Dir/<name>.yaml
	// at every start) instead of Config: on MySQL each node connects as its own user.
	ConfigFor func(name string) string
	// Book, when set, is told of every process before it starts and of its member id
	// once the node names it (see DB.Starting), so the batch log can name the member of
	// a session on a database without application_name.
	Book *DB

	mu       sync.Mutex
	nodes    map[string]*Node // the current process of each name
	gone     map[string]bool  // names the scenario stopped on purpose: not restarted
	restarts []Restart
	starts   int
}

// Restart is one restart by the process manager.
type Restart struct {
	Name     string
	Code     int
	ExitedAt time.Time
	Member   string // the member id of the process that exited
}

// NewFleet writes config into dir and returns a fleet of no nodes yet.
func NewFleet(bin, dir string, etcd *Etcd, config string) (*Fleet, error) {
	path := filepath.Join(dir, "retention.yaml")
	if err := WriteConfig(path, config); err != nil {
		return nil, err
	}
	return &Fleet{Bin: bin, Dir: dir, Etcd: etcd, Config: path, nodes: map[string]*Node{}, gone: map[string]bool{}}, nil
}

// Start starts the node called name (again), with its log at Dir/name.log.
func (f *Fleet) Start(name string) (*Node, error) {
	config := f.Config
	if f.ConfigFor != nil {
		config = filepath.Join(f.Dir, name+".yaml")
		if err := WriteConfig(config, f.ConfigFor(name)); err != nil {
			return nil, err
		}
	}
	var gen int64
	if f.Book != nil {
		var err error
		if gen, err = f.Book.Starting(context.Background(), name); err != nil {
			return nil, err
		}
	}
	n, err := StartNode(name, f.Bin, config, filepath.Join(f.Dir, name+".log"))
	if err != nil {
		return nil, err
	}
	if f.Book != nil {
		go func() {
			// A node that never names its member leaves its batches named by user and
			// generation ("retention:?rt_mn_n1@...#3"), still apart from every other.
			ctx := context.Background()
			if id, err := n.MemberID(ctx, 2*time.Minute); err == nil {
				_ = f.Book.Joined(ctx, gen, id)
			}
		}()
	}
	f.mu.Lock()
	f.nodes[name] = n
	delete(f.gone, name)
	f.starts++
	f.mu.Unlock()
	return n, nil
}

// StartN starts n1..nN and waits until each names its member id and every node sees
// all of them.
func (f *Fleet) StartN(ctx context.Context, count int) ([]*Node, error) {
	var out []*Node
	for i := 1; i <= count; i++ {
		n, err := f.Start(fmt.Sprintf("n%d", i))
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	for _, n := range out {
		if _, err := n.MemberID(ctx, 60*time.Second); err != nil {
			return nil, err
		}
	}
	return out, f.WaitMembers(ctx, 60*time.Second, count)
}

// Node is the current process of name.
func (f *Fleet) Node(name string) *Node {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.nodes[name]
}

// Nodes is the current process of every name, by name.
func (f *Fleet) Nodes() []*Node {
	f.mu.Lock()
	defer f.mu.Unlock()
	names := make([]string, 0, len(f.nodes))
	for name := range f.nodes {
		names = append(names, name)
	}
	sort.Strings(names)
	out := make([]*Node, 0, len(names))
	for _, name := range names {
		out = append(out, f.nodes[name])
	}
	return out
}

// Running is every current process that has not exited.
func (f *Fleet) Running() []*Node {
	var out []*Node
	for _, n := range f.Nodes() {
		if exited, _, _ := n.Exited(); !exited {
			out = append(out, n)
		}
	}
	return out
}

// Leave marks name as stopped on purpose (a SIGKILL or SIGTERM of the scenario's), so
// Supervise does not restart it.
func (f *Fleet) Leave(name string) {
	f.mu.Lock()
	f.gone[name] = true
	f.mu.Unlock()
}

// Restarts is every restart Supervise made.
func (f *Fleet) Restarts() []Restart {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Restart(nil), f.restarts...)
}

// Supervise restarts, until ctx ends, every node that exits with ExitFenced and is not
// marked with Leave. A node that exits with any other code stays down (a process
// manager would restart it too; the scenarios want to see it).
func (f *Fleet) Supervise(ctx context.Context) {
	tick := time.NewTicker(PollEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		for _, n := range f.Nodes() {
			exited, code, at := n.Exited()
			f.mu.Lock()
			gone := f.gone[n.Name]
			f.mu.Unlock()
			if !exited || gone || code != ExitFenced || ctx.Err() != nil {
				continue
			}
			f.mu.Lock()
			f.restarts = append(f.restarts, Restart{Name: n.Name, Code: code, ExitedAt: at, Member: n.Member()})
			f.mu.Unlock()
			if _, err := f.Start(n.Name); err != nil {
				f.Leave(n.Name)
			}
		}
	}
}

// WaitMembers waits until every running node's /cluster lists exactly want members,
// the same ones.
func (f *Fleet) WaitMembers(ctx context.Context, bound time.Duration, want int) error {
	return PollWith(ctx, ViewEvery, bound, fmt.Sprintf("every running node seeing the same %d members", want), func() (bool, error) {
		running := f.Running()
		if len(running) != want {
			return false, fmt.Errorf("%d nodes running", len(running))
		}
		var first string
		for _, n := range running {
			v, err := n.Cluster(ctx)
			if err != nil {
				return false, err
			}
			var ids []string
			for _, m := range v.Members {
				ids = append(ids, m.ID)
			}
			sort.Strings(ids)
			got := strings.Join(ids, ",")
			if len(ids) != want {
				return false, fmt.Errorf("%s sees %d members (%s)", n.Name, len(ids), got)
			}
			if first == "" {
				first = got
			} else if got != first {
				return false, fmt.Errorf("%s sees %s, another node %s", n.Name, got, first)
			}
		}
		return true, nil
	})
}

// Owners is each pass's owner as every running node's /cluster shows it; it fails when
// two nodes disagree or a pass in names has no owner.
func (f *Fleet) Owners(ctx context.Context, names []string) (map[string]string, error) {
	owners := map[string]string{}
	for _, n := range f.Running() {
		v, err := n.Cluster(ctx)
		if err != nil {
			return nil, err
		}
		for _, p := range v.Passes {
			if prev, ok := owners[p.Name]; ok && prev != p.Owner {
				return nil, fmt.Errorf("pass %s: %s says owner %q, another node %q", p.Name, n.Name, p.Owner, prev)
			}
			owners[p.Name] = p.Owner
		}
	}
	for _, name := range names {
		if owners[name] == "" {
			return nil, fmt.Errorf("pass %s has no owner", name)
		}
	}
	return owners, nil
}

// Stop sends SIGTERM to every running node and waits for each to exit; a node still
// running after bound is killed. It returns the exit codes by name.
func (f *Fleet) Stop(ctx context.Context, bound time.Duration) map[string]int {
	codes := map[string]int{}
	running := f.Running()
	for _, n := range running {
		f.Leave(n.Name)
		_ = n.Signal(syscall.SIGTERM)
	}
	for _, n := range running {
		code, err := n.Wait(ctx, bound)
		if err != nil {
			n.Kill()
			code = -1
		}
		codes[n.Name] = code
	}
	return codes
}

// Kill kills every process (the cleanup of a scenario, whatever state it is in).
func (f *Fleet) Kill() {
	for _, n := range f.Nodes() {
		f.Leave(n.Name)
		n.Kill()
	}
}

// Tail is the last lines of every node's log, for a failure message.
func (f *Fleet) Tail(lines int) string {
	var b strings.Builder
	for _, n := range f.Nodes() {
		data, err := os.ReadFile(n.LogPath())
		if err != nil {
			continue
		}
		all := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
		if len(all) > lines {
			all = all[len(all)-lines:]
		}
		fmt.Fprintf(&b, "==== %s (%s)\n%s\n", n.Name, n.LogPath(), strings.Join(all, "\n"))
	}
	return b.String()
}
