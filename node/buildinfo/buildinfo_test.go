package buildinfo

import (
	"runtime/debug"
	"slices"
	"strings"
	"testing"
)

// From reads the fields from records in the toolchain's own format.
func TestFrom(t *testing.T) {
	tests := []struct {
		name, record string
		want         Info
		text         []string
	}{
		{
			name: "clean checkout",
			record: "path\tgithub.com/retentionkit/retention/cmd/node\n" +
				"mod\tgithub.com/retentionkit/retention\tv1.2.0\t\n" +
				"build\tvcs=git\nbuild\tvcs.revision=0123abcd\nbuild\tvcs.time=2026-12-01T10:00:00Z\nbuild\tvcs.modified=false\n",
			want: Info{Version: "v1.2.0", Revision: "0123abcd", Time: "2026-12-01T10:00:00Z", GoVersion: "go1.26.8"},
			text: []string{"retention v1.2.0", "revision: 0123abcd", "committed: 2026-12-01T10:00:00Z", "go: go1.26.8"},
		},
		{
			name: "uncommitted changes",
			record: "path\tgithub.com/retentionkit/retention/cmd/node\n" +
				"mod\tgithub.com/retentionkit/retention\tv0.0.0-20261201100000-0123abcd0123+dirty\t\n" +
				"build\tvcs.revision=0123abcd0123\nbuild\tvcs.modified=true\n",
			want: Info{Version: "v0.0.0-20261201100000-0123abcd0123+dirty", Revision: "0123abcd0123", Dirty: true, GoVersion: "go1.26.8"},
			text: []string{"revision: 0123abcd0123 (modified)"},
		},
		{
			name:   "no VCS information",
			record: "path\tgithub.com/retentionkit/retention/cmd/node\nmod\tgithub.com/retentionkit/retention\t(devel)\t\n",
			want:   Info{Version: "(devel)", Revision: "unknown", GoVersion: "go1.26.8"},
			text:   []string{"retention (devel)", "revision: unknown"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bi, err := debug.ParseBuildInfo(tt.record)
			if err != nil {
				t.Fatal(err)
			}
			bi.GoVersion = "go1.26.8" // ParseInfo leaves it to the caller
			got := From(bi)
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
func TestLabels(t *testing.T) {
	b := Info{Version: "v1.2.0", Revision: "0123abcd", Dirty: true, GoVersion: "go1.26.8"}
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

// What the link stamped fills only what the toolchain left unknown.
func TestWithLinked(t *testing.T) {
	t.Parallel()
	unstamped := Info{Version: "(devel)", Revision: "unknown", GoVersion: "go1.26.8"}
	stamped := Info{Version: "v1.2.0", Revision: "0123abcd", Time: "2026-12-01T10:00:00Z", GoVersion: "go1.26.8"}
	tests := []struct {
		name string
		in   Info
		link [4]string
		want Info
	}{
		{"nothing stamped", unstamped, [4]string{}, unstamped},
		{"stamped at link", unstamped, [4]string{"v0.0.0-20261203000000-abcdef012345+dirty", "abcdef0123456789", "2026-12-03T00:00:00Z", "true"},
			Info{Version: "v0.0.0-20261203000000-abcdef012345+dirty", Revision: "abcdef0123456789", Time: "2026-12-03T00:00:00Z", Dirty: true, GoVersion: "go1.26.8"}},
		{"the toolchain's record wins", stamped, [4]string{"v9", "ffff", "2030-01-01T00:00:00Z", "true"}, stamped},
	}
	for _, tc := range tests {
		if got := tc.in.withLinked(tc.link[0], tc.link[1], tc.link[2], tc.link[3]); got != tc.want {
			t.Errorf("%s: got %+v, want %+v", tc.name, got, tc.want)
		}
	}
}
