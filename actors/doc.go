// Package actors runs retention passes as protoactor actors: one pass actor per pass
// (stagger, sweep, batch, delay), an admission pair (a gate actor that keeps two batches
// off one target and a slot-pool actor that bounds concurrent deletes per database),
// supervisors that restart a failing pass with backoff, and an observer hub that
// publishes what happens. Runtime wires them together; actors/actortest is the kit for
// testing passes on virtual time.
package actors
