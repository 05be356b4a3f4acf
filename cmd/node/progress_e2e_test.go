package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/retentionkit/retention/passes"
)

// progressEnv makes two expired tables, fast (1000 rows) and slow (3000), and a config
// sweeping both in batches of 100 with a pause between them, so fast finishes, and logs
// its "sweep done", while slow's bar is still on screen. name is the fast pass's name.
func progressEnv(t *testing.T, name string) (e *env, path string) {
	t.Helper()
	e = newEnv(t, passes.DriverSQLite)
	old := time.Now().Add(-40 * 24 * time.Hour).Unix()
	body := fmt.Sprintf("database:\n  driver: sqlite\n  dsn: %q\nledger:\n  table_prefix: %s\npasses:\n", e.dsn, e.prefix)
	for _, tc := range []struct {
		pass, table string
		rows        int
	}{{name, "fast", 1000}, {"slow", "slow", 3000}} {
		table := e.prefix + tc.table
		e.exec(`CREATE TABLE ` + table + ` (id BIGINT PRIMARY KEY, ts BIGINT NOT NULL)`)
		e.exec(`CREATE INDEX ` + table + `_ts ON ` + table + ` (ts, id)`)
		e.exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?) INSERT INTO `+table+` SELECT i, ? - i FROM n`, tc.rows, old)
		t.Cleanup(func() { _, _ = e.db.ExecContext(context.Background(), "DROP TABLE IF EXISTS "+table) })
		body += fmt.Sprintf("  - { name: %s, table: %s, key: id, timestamp: ts, timestamp_format: unix, retention_period: 30d,"+
			" batch_size: 100, batch_delay: 50ms, max_startup_stagger: 0s }\n", tc.pass, table)
	}
	path = filepath.Join(e.dir, "progress.yaml")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return e, path
}

// tmuxOrSkip returns tmux's path; without tmux the test is skipped, except under CI,
// where it must run.
func tmuxOrSkip(t *testing.T) string {
	t.Helper()
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("tmux is not installed (apt-get install tmux): the progress bar test needs a terminal")
		}
		t.Skip("tmux is not installed")
	}
	return tmux
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// TestALogLineDuringAProgressBarLeavesTheBarIntact runs `sweep --progress always` in a
// tmux pane, a pseudo-terminal, and reads the pane when it is done. The fast pass's
// "sweep done" line is logged while both bars are drawn: it must stand whole above
// them, each pass must keep exactly one bar line (a log line written past the bars
// leaves stale copies of them and is itself overwritten), and each bar must end at the
// rows the pass deleted.
func TestALogLineDuringAProgressBarLeavesTheBarIntact(t *testing.T) {
	t.Parallel()
	tmux := tmuxOrSkip(t)
	_, path := progressEnv(t, "fast")
	sock := filepath.Join(t.TempDir(), "tmux.sock")
	run := func(ctx context.Context, args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(ctx, tmux, append([]string{"-S", sock, "-f", "/dev/null"}, args...)...)
		cmd.Env = slices.DeleteFunc(os.Environ(), func(v string) bool { return strings.HasPrefix(v, "TMUX=") })
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a bound on a hang
	defer cancel()
	script := fmt.Sprintf("%s sweep --config %s --progress always; echo exit=$?; %s -S %s wait-for -S swept; read x",
		shellQuote(binary), shellQuote(path), shellQuote(tmux), shellQuote(sock))
	run(ctx, "new-session", "-d", "-s", "sweep", "-x", "220", "-y", "50", script)
	t.Cleanup(func() { _ = exec.Command(tmux, "-S", sock, "kill-server").Run() })
	run(ctx, "wait-for", "swept")
	pane := run(ctx, "capture-pane", "-p", "-t", "sweep")

	lines := strings.Split(pane, "\n")
	if !slices.Contains(lines, "exit=0") {
		t.Fatalf("the sweep failed:\n%s", pane)
	}
	logAt := slices.IndexFunc(lines, func(l string) bool {
		return strings.Contains(l, "sweep done") && strings.Contains(l, "pass=fast") && strings.Contains(l, "rows=1000")
	})
	if logAt < 0 {
		t.Fatalf("the fast pass's sweep done line is not whole in the pane:\n%s", pane)
	}
	for _, bar := range []struct{ pass, final string }{{"fast", "1000 / 1000 rows"}, {"slow", "3000 / 3000 rows"}} {
		var at []int
		for i, l := range lines {
			if strings.HasPrefix(l, bar.pass+" ") && strings.Contains(l, "rows [") {
				at = append(at, i)
			}
		}
		if len(at) != 1 {
			t.Fatalf("%d bar lines of %s, want 1:\n%s", len(at), bar.pass, pane)
		}
		if !strings.Contains(lines[at[0]], bar.final) || at[0] < logAt {
			t.Fatalf("the bar of %s is %q at line %d, want %q below the log line (line %d):\n%s", bar.pass, lines[at[0]], at[0], bar.final, logAt, pane)
		}
	}
}

// TestProgressOnAPipeIsWholeLines runs `sweep --progress always` into a pipe: each
// frame is whole lines, none cut short even with a long pass name, and the last frame
// shows every pass at the rows it deleted.
func TestProgressOnAPipeIsWholeLines(t *testing.T) {
	t.Parallel()
	name := "fast-pass-with-a-name-long-enough-to-fill-a-line"
	_, path := progressEnv(t, name)
	r := retention(t, "sweep", "--config", path, "--progress", "always")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if strings.ContainsAny(r.stdout, "\r\x1b…") {
		t.Fatalf("a pipe got terminal control or cut lines:\n%q", r.stdout)
	}
	bar := regexp.MustCompile(`^(\S+) +(\d+) / (\d+) rows \[[=>-]+\] +(\d+ rows/s)? +\d+s$`)
	last := map[string]string{}
	for _, l := range strings.Split(r.stdout, "\n") {
		if !strings.Contains(l, "rows [") {
			continue
		}
		m := bar.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("not a whole bar line: %q", l)
		}
		last[m[1]] = m[2] + " / " + m[3]
	}
	if last[name] != "1000 / 1000" || last["slow"] != "3000 / 3000" {
		t.Fatalf("last frame %v, want every pass at the rows it deleted:\n%s", last, r.stdout)
	}
}
