// Package gates holds two blocking admission primitives with a documented order: a
// KeyedGate, which lets callers of one key in one at a time and never makes callers of
// different keys wait for each other, and a SlotPool, a fixed number of slots handed out
// strictly first come, first served.
//
// Both are thin wrappers over Queue, the admission rules written once without blocking
// or locking. The retention runtime's admission actors own a Queue each, to keep two
// deletes off one table and to bound the deletes running against one database at once,
// and the cluster's advisory slot pool orders its member's requests for the shared
// slots with one; nothing else writes those rules.
//
// # Order and cancellation
//
// Both admit waiters strictly in arrival order: a caller arriving while others wait
// queues behind them, even when a slot has just been freed. A context that has already
// ended fails Enter before anything is taken. A caller whose context ends while it waits
// leaves the queue holding nothing.
//
// A grant and a cancellation can race: the slot is handed over at the instant the
// caller's context ends. The rule is that a grant already made stands: Enter returns the
// ticket with a nil error, and the caller must release it. No slot is ever lost or given
// to two holders.
//
// # Composition
//
// Take the gate before the pool, so a caller queued behind another of the same key never
// sits on a slot it cannot use, and release in reverse order:
//
//	g, err := gate.Enter(ctx, table)
//	if err != nil {
//		return err
//	}
//	defer g.Release()
//	s, err := pool.Enter(ctx)
//	if err != nil {
//		return err // the deferred Release gives the gate back
//	}
//	defer s.Release()
package gates
