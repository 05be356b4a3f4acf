// Package passtest is the database half of the test kit: it opens throwaway databases
// (an embedded SQLite file always, PostgreSQL when TEST_DATABASE_URL names a server),
// seeds a table with rows on both sides of a cutoff from a small declaration, and
// asserts on what a pass left behind, listing the offending keys when it fails.
//
//	passtest.Each(t, func(t *testing.T, db *passtest.DB) {
//		tbl := passtest.Seed(t, db, passtest.Fixture{Table: "sessions", Cutoff: cutoff, Expired: 5, Fresh: 3})
//		pass, _ := passes.NewTable(db.DB, "sessions", tbl.Spec())
//		// ... run the pass ...
//		tbl.RequireSwept(t) // every expired row gone, every fresh one still there
//	})
//
// It lives under passes because it writes SQL through bun, and only passes (and the
// node) may. To run the pass on the runtime rather than by hand, use
// actors/actortest.SweepOnce, whose cutoff is exactly actortest.SweepCutoff(opts).
package passtest
