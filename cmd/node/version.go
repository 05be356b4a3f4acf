package main

import (
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// BuildInfo is what the binary knows about its own build: the module version, the VCS
// revision it was built from (and whether the work tree had uncommitted changes) and the
// Go toolchain. It is read in one place so that `retention version`, `--version` and the
// retention_build_info metric can never disagree.
type BuildInfo struct {
	Version   string // module version, e.g. v1.2.0 or a pseudo-version; "(devel)" when unknown
	Revision  string // VCS revision, "unknown" when the build recorded none
	Time      string // commit time of Revision (RFC 3339), "" when unknown
	Dirty     bool   // the work tree had uncommitted changes
	GoVersion string // the Go toolchain, e.g. go1.26.8
}

// BuildInfoLabelNames are the label names of the retention_build_info metric, in the
// order LabelValues returns their values.
var BuildInfoLabelNames = []string{"version", "revision", "goversion"}

// ReadBuildInfo reads the build information the Go toolchain embedded in this binary.
// A binary built without it (rare: only some exotic build modes) reports "(devel)" and
// "unknown" instead of failing, since a version string must never stop the node.
func ReadBuildInfo() BuildInfo {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return BuildInfo{Version: "(devel)", Revision: "unknown", GoVersion: "unknown"}
	}
	return buildInfoFrom(bi)
}

// buildInfoFrom picks the fields we report out of the toolchain's record.
func buildInfoFrom(bi *debug.BuildInfo) BuildInfo {
	b := BuildInfo{Version: bi.Main.Version, Revision: "unknown", GoVersion: bi.GoVersion}
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
func (b BuildInfo) RevisionLabel() string {
	if b.Dirty {
		return b.Revision + "-dirty"
	}
	return b.Revision
}

// LabelValues are the values of BuildInfoLabelNames for this build, for a gauge such as
// retention_build_info{version,revision,goversion} that is always 1.
func (b BuildInfo) LabelValues() []string {
	return []string{b.Version, b.RevisionLabel(), b.GoVersion}
}

// Labels are the same labels as a map, for prometheus.Opts.ConstLabels.
func (b BuildInfo) Labels() map[string]string {
	labels := make(map[string]string, len(BuildInfoLabelNames))
	for i, v := range b.LabelValues() {
		labels[BuildInfoLabelNames[i]] = v
	}
	return labels
}

// String is the text `retention version` and `retention --version` print.
func (b BuildInfo) String() string {
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

// addVersion gives root both spellings of the version: the --version flag (cobra's)
// and the version command, printing the same text.
func addVersion(root *cobra.Command) {
	info := ReadBuildInfo()
	root.Version = info.Version
	root.SetVersionTemplate(info.String())
	root.AddCommand(&cobra.Command{
		Use:     "version",
		Short:   "Print the version, the VCS revision and the Go version this binary was built with",
		Example: "  retention version\n  retention --version",
		Args:    exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprint(cmd.OutOrStdout(), info.String())
			return err
		},
	})
}
