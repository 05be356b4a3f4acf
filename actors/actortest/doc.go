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
package actortest
