package main

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// goVersionM is what `go version -m` (the toolchain's own reader, not ours) says about
// a binary: the Go version, the main module's version and the vcs.* build settings.
type goVersionM struct {
	goVersion, modVersion string
	settings              map[string]string
}

func readGoVersionM(t *testing.T, path string) goVersionM {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "go", "version", "-m", path).Output()
	if err != nil {
		t.Fatalf("go version -m: %v", err)
	}
	g := goVersionM{settings: map[string]string{}}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for first := true; sc.Scan(); first = false {
		fields := strings.Fields(sc.Text())
		switch {
		case first && len(fields) == 2: // "<path>: go1.x"
			g.goVersion = fields[1]
		case len(fields) >= 3 && fields[0] == "mod":
			g.modVersion = fields[2]
		case len(fields) == 2 && fields[0] == "build":
			if k, v, ok := strings.Cut(fields[1], "="); ok {
				g.settings[k] = v
			}
		}
	}
	if g.goVersion == "" || g.modVersion == "" {
		t.Fatalf("go version -m printed no go or mod line:\n%s", out)
	}
	return g
}

// Both spellings print what the toolchain recorded in the binary.
func TestVersionPrintsTheBuildInfo(t *testing.T) {
	t.Parallel()
	want := readGoVersionM(t, binary)
	cmd := retention(t, "version")
	flag := retention(t, "--version")
	if cmd.code != 0 || flag.code != 0 {
		t.Fatalf("version exited %d (%s), --version exited %d (%s)", cmd.code, cmd.stderr, flag.code, flag.stderr)
	}
	if cmd.stdout != flag.stdout {
		t.Fatalf("version and --version differ:\n%s---\n%s", cmd.stdout, flag.stdout)
	}
	lines := strings.Split(strings.TrimSpace(cmd.stdout), "\n")
	rev := want.settings["vcs.revision"]
	if rev == "" {
		rev = "unknown"
	}
	if want.settings["vcs.modified"] == "true" {
		rev += " (modified)"
	}
	for _, line := range []string{"retention " + want.modVersion, "revision: " + rev, "go: " + want.goVersion} {
		if !slices.Contains(lines, line) {
			t.Errorf("version output lacks %q:\n%s", line, cmd.stdout)
		}
	}
}

func TestVersionTakesNoArguments(t *testing.T) {
	t.Parallel()
	if r := retention(t, "version", "extra"); r.code != 2 {
		t.Fatalf("version extra: exit %d, want 2 (%s)", r.code, r.stderr)
	}
}

// `make build` stamps a version and the revision even where the toolchain stamps
// nothing (here forced with -buildvcs=false, as go run and trees without .git do). The
// test runs its binary target, the part of build that stamps.
func TestMakeBuildStampsTheVersion(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"make", "git"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s: %v", tool, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute) // a bound on a hang
	defer cancel()
	git := func(args ...string) string {
		out, err := exec.CommandContext(ctx, "git", args...).Output()
		if err != nil {
			t.Fatalf("git %s: %v", strings.Join(args, " "), err)
		}
		return strings.TrimSpace(string(out))
	}
	top := git("rev-parse", "--show-toplevel")
	bin := filepath.Join(t.TempDir(), "retention")
	mk := exec.CommandContext(ctx, "make", "-s", "-C", top, "binary", "BIN="+bin)
	mk.Env = append(os.Environ(), "GOFLAGS=-buildvcs=false")
	if out, err := mk.CombinedOutput(); err != nil {
		t.Fatalf("make binary: %v\n%s", err, out)
	}
	want := "revision: " + git("rev-parse", "HEAD")
	if git("status", "--porcelain") != "" {
		want += " (modified)"
	}
	for _, args := range [][]string{{"--version"}, {"version"}} {
		out, err := exec.CommandContext(ctx, bin, args...).Output()
		if err != nil {
			t.Fatalf("retention %s: %v", args[0], err)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if !slices.Contains(lines, want) {
			t.Errorf("retention %s lacks %q:\n%s", args[0], want, out)
		}
		if lines[0] == "retention (devel)" || !strings.HasPrefix(lines[0], "retention v") {
			t.Errorf("retention %s shows no version:\n%s", args[0], out)
		}
	}
}
