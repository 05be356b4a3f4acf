// Package buildinfo reads what the binary knows about its own build, in one place, so
// that `retention version`, `--version` and the retention_build_info metric never disagree,
// and a service embedding the runtime can label its metrics the same way.
package buildinfo

import (
	"fmt"
	"runtime/debug"
	"strings"
)

// Info is what the binary knows about its own build: the module version, the VCS
// revision it was built from (and whether the work tree had uncommitted changes) and the
// Go toolchain. It is read in one place so that `retention version`, `--version` and the
// retention_build_info metric can never disagree.
type Info struct {
	Version   string // module version, e.g. v1.2.0 or a pseudo-version; "(devel)" when unknown
	Revision  string // VCS revision, "unknown" when the build recorded none
	Time      string // commit time of Revision (RFC 3339), "" when unknown
	Dirty     bool   // the work tree had uncommitted changes
	GoVersion string // the Go toolchain, e.g. go1.26.8
}

// LabelNames returns the label names of the retention_build_info metric, in the
// order LabelValues returns their values.
func LabelNames() []string { return []string{"version", "revision", "goversion"} }

// Read reads the build information the Go toolchain embedded in this binary, with what
// `make build` stamped at link time filling the fields the toolchain left unknown (go
// run, -buildvcs=false). A binary built with neither reports "(devel)" and "unknown"
// instead of failing, since a version string must never stop the node.
func Read() Info {
	bi, ok := debug.ReadBuildInfo()
	b := Info{Version: "(devel)", Revision: "unknown", GoVersion: "unknown"}
	if ok {
		b = From(bi)
	}
	return b.withLinked(linkedVersion, linkedRevision, linkedTime, linkedModified)
}

// From picks the fields we report out of the toolchain's record (exported for a
// caller holding a record of another binary, and for tests).
func From(bi *debug.BuildInfo) Info {
	b := Info{Version: bi.Main.Version, Revision: "unknown", GoVersion: bi.GoVersion}
	if b.Version == "" {
		b.Version = "(devel)"
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Revision = s.Value
		case "vcs.time":
			b.Time = s.Value
		case "vcs.modified":
			b.Dirty = s.Value == "true"
		}
	}
	return b
}

// RevisionLabel is the revision as a metric label shows it: the revision, with
// "-dirty" appended when the work tree had uncommitted changes, so a dashboard tells a
// reproducible build from one that is not.
func (b Info) RevisionLabel() string {
	if b.Dirty {
		return b.Revision + "-dirty"
	}
	return b.Revision
}

// LabelValues are the values of LabelNames for this build, for a gauge such as
// retention_build_info{version,revision,goversion} that is always 1.
func (b Info) LabelValues() []string {
	return []string{b.Version, b.RevisionLabel(), b.GoVersion}
}

// Labels are the same labels as a map, for prometheus.Opts.ConstLabels.
func (b Info) Labels() map[string]string {
	names := LabelNames()
	labels := make(map[string]string, len(names))
	for i, v := range b.LabelValues() {
		labels[names[i]] = v
	}
	return labels
}

// String is the text `retention version` and `retention --version` print.
func (b Info) String() string {
	var s strings.Builder
	fmt.Fprintf(&s, "retention %s\n", b.Version)
	rev := b.Revision
	if b.Dirty {
		rev += " (modified)"
	}
	fmt.Fprintf(&s, "revision: %s\n", rev)
	if b.Time != "" {
		fmt.Fprintf(&s, "committed: %s\n", b.Time)
	}
	fmt.Fprintf(&s, "go: %s\n", b.GoVersion)
	return s.String()
}
