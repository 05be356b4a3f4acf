// Package passes is the contract between the retention runtime and the code that
// deletes: a Pass deletes one bounded batch of expired rows, and Options say how often,
// how much and how gently. Everything around the delete (the loop, the cutoff, pacing,
// stagger, admission, supervision) is the runtime's job, in package actors.
//
// The ready-made passes over bun (declarative table passes and the run ledger) live here
// too: this package and cmd/node are the only ones that touch SQL.
package passes
