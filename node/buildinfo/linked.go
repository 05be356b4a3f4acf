package buildinfo

// What the Makefile's build target stamps at link time (-ldflags "-X ..."), for the
// builds the toolchain cannot stamp itself: go run, -buildvcs=false, a tree copied
// without its .git. Each is empty unless stamped; nothing in the program assigns them.
var (
	linkedVersion  string // the tag at HEAD, or a pseudo-version as go build writes one
	linkedRevision string // the commit
	linkedTime     string // its commit time, RFC 3339
	linkedModified string // "true" when the work tree had uncommitted changes
)

// withLinked fills in what the toolchain left unknown (a "(devel)" version, an
// "unknown" revision) from what was stamped at link time; what the toolchain recorded
// wins, so the two can never be mixed for one field.
func (b Info) withLinked(version, revision, commitTime, modified string) Info {
	if b.Version == "(devel)" && version != "" {
		b.Version = version
	}
	if b.Revision == "unknown" && revision != "" {
		b.Revision, b.Time, b.Dirty = revision, commitTime, modified == "true"
	}
	return b
}
