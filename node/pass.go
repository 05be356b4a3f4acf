// Package node is the retention node as a library: the passes a node runs and how it
// runs them, so cmd/node and an embedding program build the same node.
package node

import (
	"github.com/retentionkit/retention/passes"
)

// Pass is one pass of a node: the one record of its registration and, for a table
// pass, the table behind it. Keeping both in one value is why a change to a pass (the
// drain's unbounded sweeps, a sweep lock) cannot reach one and miss the other, as it
// could when they were parallel slices.
type Pass struct {
	// Registration is what the runtime runs: the name, the factory and the options.
	Registration passes.Registration
	// Table is the table a table pass deletes from; nil for a Go pass, which has no
	// dry run, backlog, startup check or sweep lock of its own.
	Table *passes.Table
}

// TablePass is the pass of t with opts, registered as the table registers itself.
func TablePass(t *passes.Table, opts passes.Options) Pass {
	return Pass{Registration: t.Registration(opts), Table: t}
}

// GoPass is a pass written in Go by an embedding program: the node runs, meters and
// reports it like a table pass, but measures no backlog for it.
func GoPass(r passes.Registration) Pass {
	return Pass{Registration: r}
}

// Name is the pass's name, unique in its node.
func (p Pass) Name() string { return p.Registration.Name }

// Options are the options the pass runs with.
func (p Pass) Options() passes.Options { return p.Registration.Options }

// IsTable reports whether the pass deletes from a table, so it has the table's dry
// run, backlog, startup check and sweep lock.
func (p Pass) IsTable() bool { return p.Table != nil }

// WithTable is p with its table replaced by t (a locked or quarantined copy), its
// registration rebuilt from its current options so nothing set on them is lost.
func (p Pass) WithTable(t *passes.Table) Pass {
	p.Table = t
	p.Registration = t.Registration(p.Registration.Options)
	return p
}
