// Package actortest is the kit for testing passes, and the runtime itself, on virtual
// time: a manual clock, a scripted fake pass, an event probe and a harness that runs a
// real actors.Runtime (real protoactor actors, real supervision) inside a
// testing/synctest bubble, so "wait an hour" takes no time and "nothing happened"
// means nothing could have.
//
//	actortest.Run(t, actors.Config{}, func(t *testing.T, h *actortest.Harness) {
//		fake := actortest.NewFakePass(actortest.Rows(500), actortest.Rows(20))
//		h.Register(passes.Registration{Name: "audit", New: fake.Factory(), Options: opts})
//		h.Start()
//		h.ExpectWithin(time.Minute, actortest.Is[actors.SweepDone]())
//	})
//
// The harness advances the clock one due timer at a time and lets every goroutine of
// the bubble settle after each, so timers set in reaction to an event fire at the
// virtual time they would have fired at on the wall clock.
//
// A pass that talks to a database does not belong in a bubble (its I/O takes real time
// while the bubble's clock is fake). SweepOnce runs it on a real runtime outside one, on a clock
// that stands at Epoch, so its cutoff is exactly SweepCutoff(opts); package
// passes/passtest opens the throwaway databases, seeds a table on both sides of that
// cutoff and asserts on the keys that are left:
//
//	passtest.Each(t, func(t *testing.T, db *passtest.DB) {
//		tbl := passtest.Seed(t, db, passtest.Fixture{Table: "audit_log", Cutoff: actortest.SweepCutoff(opts), Expired: 10, Fresh: 3})
//		pass, _ := passes.NewTable(db.DB, "audit-log", tbl.Spec())
//		done, _ := actortest.SweepOnce(t, actors.Config{}, pass.Registration(opts))
//		tbl.RequireSwept(t)
//	})
package actortest
