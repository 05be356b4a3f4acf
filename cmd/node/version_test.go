package main

import (
	"bufio"
	"context"
	"os/exec"
	"runtime/debug"
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
	if r := retention(t, "version", "extra"); r.code != 2 {
		t.Fatalf("version extra: exit %d, want 2 (%s)", r.code, r.stderr)
	}
}

// buildInfoFrom reads the fields from records in the toolchain's own format.
func TestBuildInfoFrom(t *testing.T) {
	tests := []struct {
		name, record string
		want         BuildInfo
		text         []string
	}{
		{
			name: "clean checkout",
			record: "path\tgithub.com/retentionkit/retention/cmd/node\n" +
				"mod\tgithub.com/retentionkit/retention\tv1.2.0\t\n" +
				"build\tvcs=git\nbuild\tvcs.revision=0123abcd\nbuild\tvcs.time=2026-12-01T10:00:00Z\nbuild\tvcs.modified=false\n",
			want: BuildInfo{Version: "v1.2.0", Revision: "0123abcd", Time: "2026-12-01T10:00:00Z", GoVersion: "go1.26.8"},
			text: []string{"retention v1.2.0", "revision: 0123abcd", "committed: 2026-12-01T10:00:00Z", "go: go1.26.8"},
		},
		{
			name: "uncommitted changes",
			record: "path\tgithub.com/retentionkit/retention/cmd/node\n" +
				"mod\tgithub.com/retentionkit/retention\tv0.0.0-20261201100000-0123abcd0123+dirty\t\n" +
				"build\tvcs.revision=0123abcd0123\nbuild\tvcs.modified=true\n",
			want: BuildInfo{Version: "v0.0.0-20261201100000-0123abcd0123+dirty", Revision: "0123abcd0123", Dirty: true, GoVersion: "go1.26.8"},
			text: []string{"revision: 0123abcd0123 (modified)"},
		},
		{
			name:   "no VCS information",
			record: "path\tgithub.com/retentionkit/retention/cmd/node\nmod\tgithub.com/retentionkit/retention\t(devel)\t\n",
			want:   BuildInfo{Version: "(devel)", Revision: "unknown", GoVersion: "go1.26.8"},
			text:   []string{"retention (devel)", "revision: unknown"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bi, err := debug.ParseBuildInfo(tt.record)
			if err != nil {
				t.Fatal(err)
			}
			bi.GoVersion = "go1.26.8" // ParseBuildInfo leaves it to the caller
			got := buildInfoFrom(bi)
			if got != tt.want {
				t.Fatalf("got %#v, want %#v", got, tt.want)
			}
			lines := strings.Split(got.String(), "\n")
			for _, l := range tt.text {
				if !slices.Contains(lines, l) {
					t.Errorf("String() lacks %q:\n%s", l, got.String())
				}
			}
			if strings.Contains(got.String(), "committed:") != (tt.want.Time != "") {
				t.Errorf("String() shows a commit time iff one is known:\n%s", got.String())
			}
		})
	}
}

// The metric's labels are the same values in the documented order.
func TestBuildInfoLabels(t *testing.T) {
	b := BuildInfo{Version: "v1.2.0", Revision: "0123abcd", Dirty: true, GoVersion: "go1.26.8"}
	want := map[string]string{"version": "v1.2.0", "revision": "0123abcd-dirty", "goversion": "go1.26.8"}
	got := b.Labels()
	if len(got) != len(want) {
		t.Fatalf("labels %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("label %s = %q, want %q", k, got[k], v)
		}
	}
	b.Dirty = false
	if b.LabelValues()[1] != "0123abcd" {
		t.Errorf("a clean build's revision label is %q", b.LabelValues()[1])
	}
}
