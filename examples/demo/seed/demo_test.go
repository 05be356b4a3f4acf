package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMakeRunTellsItsStoryEveryTime runs `make run` from the repository root twice in a
// row on one database, as a newcomer trying it twice would, and waits each time for every
// part of the story the guide announces: the second run must show it all again, not a
// drained database.
func TestMakeRunTellsItsStoryEveryTime(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "demo.db")
	for run := 1; run <= 2; run++ {
		t.Run(fmt.Sprintf("run %d", run), func(t *testing.T) { makeRun(t, root, db) })
	}
}

// beat is one part of the demo's story: the log line it is about, and, for a line that
// can come out wrong, what it must hold (a wrong one fails at once instead of at the guard).
type beat struct {
	what  string
	about func(line string, kv map[string]string) bool
	holds func(kv map[string]string) bool
}

// story is what every `make run` must show, on the admin address addr and database db.
func story(addr, db string) []beat {
	done := func(pass, sweep string) func(string, map[string]string) bool {
		return func(_ string, kv map[string]string) bool {
			return kv["msg"] == "sweep done" && kv["pass"] == pass && kv["sweep"] == sweep
		}
	}
	started := func(pass string) func(string, map[string]string) bool {
		return func(_ string, kv map[string]string) bool { return kv["msg"] == "pass started" && kv["pass"] == pass }
	}
	// The held rows are one summary per sweep that met them, not a warning per row.
	held := func(_ string, kv map[string]string) bool {
		return kv["level"] == "warning" && kv["pass"] == "audit-log" && strings.HasPrefix(kv["msg"], "rows held in place") && positive(kv["held"])
	}
	return []beat{
		{"the guide, seeded afresh", func(l string, _ map[string]string) bool {
			return strings.HasPrefix(l, "Seeded "+db+" afresh")
		}, nil},
		{"the guide's /passes on the admin address", func(l string, _ map[string]string) bool {
			return strings.Contains(l, "curl -s http://"+addr+"/passes")
		}, nil},
		{"the admin endpoint there", func(_ string, kv map[string]string) bool {
			return kv["msg"] == "admin endpoint listening" && kv["addr"] == addr
		}, nil},
		{"audit-log staggered", started("audit-log"), staggered},
		{"sessions staggered", started("sessions"), staggered},
		{"a paced first sweep stopping at its bound", done("audit-log", "1"), func(kv map[string]string) bool {
			d, err := time.ParseDuration(kv["duration"])
			// 20 batches have 19 delays of 200ms between them: a lower bound, never a race.
			return kv["reason"] == "batch_limit" && kv["work_remains"] == "true" && kv["batches"] == "20" &&
				positive(kv["rows"]) && err == nil && d >= 19*200*time.Millisecond
		}},
		{"the next sweep continuing to the end", done("audit-log", "2"), func(kv map[string]string) bool {
			// held when it met a row export_job references, drained when the first did.
			return (kv["reason"] == "held" || kv["reason"] == "drained") && positive(kv["rows"])
		}},
		{"the rows export_job holds, summarised", held, nil},
		{"the metadata cleanup pruning old runs", done("retention.metadata-cleanup", "1"), func(kv map[string]string) bool {
			return positive(kv["rows"])
		}},
	}
}

// staggered: a pass starts at an offset within the demo's max_startup_stagger of 5s.
func staggered(kv map[string]string) bool {
	d, err := time.ParseDuration(kv["offset"])
	return err == nil && d > 0 && d <= 5*time.Second
}

func positive(n string) bool {
	v, err := strconv.Atoi(n)
	return err == nil && v > 0
}

// makeRun runs `make run` on db and a free admin port until its log has told the whole
// story, then stops it with Ctrl-C's signal and waits for it to exit.
func makeRun(t *testing.T, root, db string) {
	addr := freeAddr(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute) // a bound on a hang
	defer cancel()
	cmd := exec.CommandContext(ctx, "make", "run")
	cmd.Dir = root
	cmd.Env = append(withoutRetentionVars(os.Environ()), "RETENTION_DEMO_DB="+db, "RETENTION_DEMO_ADMIN="+addr)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	lines := make(chan string, 64)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	defer func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
		go func() { // keep reading, so a node logging its shutdown never blocks on the pipe
			for range lines {
			}
		}()
		_ = cmd.Wait()
		r.Close()
	}()
	waitForStory(t, ctx, lines, story(addr, db))
}

// waitForStory reads lines until every beat has been seen.
func waitForStory(t *testing.T, ctx context.Context, lines <-chan string, beats []beat) {
	t.Helper()
	var log []string
	missing := func() string {
		var m []string
		for _, b := range beats {
			m = append(m, b.what)
		}
		return strings.Join(m, "; ")
	}
	for len(beats) > 0 {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("make run ended before showing: %s\n%s", missing(), strings.Join(log, "\n"))
			}
			log = append(log, line)
			kv := fields(line)
			for i := 0; i < len(beats); i++ {
				b := beats[i]
				if !b.about(line, kv) {
					continue
				}
				if b.holds != nil && !b.holds(kv) {
					t.Fatalf("make run did not show %s: %q\n%s", b.what, line, strings.Join(log, "\n"))
				}
				beats = append(beats[:i], beats[i+1:]...)
				i--
			}
		case <-ctx.Done():
			t.Fatalf("make run has not shown, in time: %s\n%s", missing(), strings.Join(log, "\n"))
		}
	}
}

var field = regexp.MustCompile(`([A-Za-z_][A-Za-z0-9_.]*)=("(?:[^"\\]|\\.)*"|\S*)`)

// fields reads a text log line's key=value pairs (values unquoted).
func fields(line string) map[string]string {
	kv := map[string]string{}
	for _, m := range field.FindAllStringSubmatch(line, -1) {
		v := m[2]
		if u, err := strconv.Unquote(v); err == nil {
			v = u
		}
		kv[m[1]] = v
	}
	return kv
}

// freeAddr returns a loopback address no one listens on just now.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// withoutRetentionVars drops the RETENTION_* variables of the test's environment: the
// demo must run without any (and RETENTION_DATABASE_URL would point it elsewhere).
func withoutRetentionVars(env []string) []string {
	var out []string
	for _, e := range env {
		if !strings.HasPrefix(e, "RETENTION_") {
			out = append(out, e)
		}
	}
	return out
}
