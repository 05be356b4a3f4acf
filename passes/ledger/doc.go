// Package ledger is the run history of a retention node, kept in the node's own
// database: a metadata row for every sweep (name, state, times, cutoff, counts, stop
// reason, error), log rows for its warnings, errors and skipped rows, work-queue rows for
// requested sweeps, dead letters for passes supervision gave up on, runtime settings, and
// the quarantine of rows table passes could not delete (Quarantine).
//
// Its tables share a configurable prefix (default "retention_"), are created and
// upgraded by bun migrations (Migrate), and reference each other with ON DELETE RESTRICT
// foreign keys, so nothing is deleted out of order.
package ledger
