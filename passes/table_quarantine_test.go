package passes_test

// What the quarantine does to a table pass's sweeps (a referenced row's doubling
// backoff, a vanished row's release, the oldest expired row leaving quarantined rows
// out, no bisection of quarantined rows past the left-out keys nor of rows an unlisted
// table references, a row a trigger refuses) is stated once in the conformance suite
// (passes/passtest, quarantine area), which every driver runs.
