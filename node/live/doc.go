// Package live is the node's live control of its passes, after gh-ost's interactive
// commands: an operator changes a pass's batch size, batch delay, sweep interval or
// pacing, or pauses it, with `retention settings set`, `retention pause` or the admin
// API; the value is stored in the ledger's settings table, and every node sharing the
// ledger picks it up on its next poll (Poller) and hands it to its runtime
// (actors.Runtime.SetOverride). Removing the setting returns the pass to the
// configuration file's value.
package live
