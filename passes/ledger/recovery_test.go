package ledger_test

// Run recovery and ownership (an abandoned run closed once its node's heartbeat is stale,
// a cut-off owner's late ending, progress that only grows, claims and activations that
// record their node) are stated in the conformance suite (passes/passtest, recovery
// area), which every driver runs.
