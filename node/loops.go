package node

import (
	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/ledger"
)

// LedgerLoops are the ledger's own passes: run recovery always and, with a cleanup plan
// (nil when the file turns the cleanup off), the metadata and dead-letter cleanups.
// names are the passes the runtime runs, whose runs the cleanup keeps under their
// aliases; warn hears the cleanup's warnings. They are passes like any other so a
// cluster can give each to one member; without a ledger (l nil) there are none.
func LedgerLoops(l *ledger.Ledger, plan *ledger.Plan, names []string, warn func(string)) []passes.Registration {
	if l == nil {
		return nil
	}
	loops := []passes.Registration{ledger.NewRunRecovery(l, 0, 0).Registration()}
	if plan == nil {
		return loops
	}
	cleanup := ledger.NewCleanup(l, plan).WithAliases(ledger.AliasesFor(names)).WithWarnings(warn)
	return append(loops, cleanup.Registration(), ledger.NewDeadLetterCleanup(l, 0, 0).Registration())
}
