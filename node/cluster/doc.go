// Package cluster runs a node as a member of a protoactor cluster, so several nodes
// share the passes: each pass is a grain (kind "pass", identity = the pass name) placed
// by rendezvous hashing over the members, and the grain hosts the runtime's ordinary
// pass actor through actors.Runtime's placement calls (Config.Placed, Activate,
// Deactivate).
//
// Placement is advisory. Duplicate activations happen while members disagree about the
// topology, so a grain being active never means "may delete": each sweep takes a
// PostgreSQL advisory lock for its identity, and PostgreSQL decides. This package only
// places, reconciles (protoactor re-activates nothing when a member is lost), fences a
// member that dropped out of the topology (protoactor blocks it for good and never tells
// it), and reports what it knows to the admin endpoint. docs/cluster.md is the user's
// guide.
package cluster
