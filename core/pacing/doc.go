// Package pacing is the adaptive pace of a sweep: how many rows the next batch deletes
// and how long the sweep pauses before it, chosen from what the database's other users
// see rather than from numbers an operator picked for one machine and one load.
//
// A Controller sizes each batch to a target batch time (short batches hurt a concurrent
// workload less than long ones, whatever the pause), keeps the sweep's backend busy at
// most a share of the time, and steers a deletion rate from foreground signals: the
// latency of a cheap probe query against a baseline learned while the sweep holds back
// (its p75 may rise by a quarter of the idle p99: the latency a p99 held within 1.25
// times idle can absorb), the workload's busy sessions judged the same way (a surge of
// the load shows there first), the sessions the sweep's backend blocks, and replica lag. A degraded signal cuts the
// rate multiplicatively; healthy signals grow it again (doubling until the first cut,
// then by a fixed step). The baseline is re-learned the way BBR and TCP Vegas re-probe
// their minimum round trip, so a load that changes for good moves the baseline with
// it: from any stretch in which the sweep deleted nothing by itself (it waited for a
// slot, it was paused), and otherwise by holding the sweep back for BaselineHold once
// the baseline is BaselineEvery old, or at once when back-offs have gone on for
// RelearnAfter with no healthy evaluation between them. Neither runs inside a shorter
// spell of back-offs: that is how a surge of the load looks, and a baseline learned in
// it would let the sweep grow back into the surge.
//
// The controller does no I/O and reads no clock: every sample and every decision
// carries the time it is about, so it runs the same under a real clock, a manual one in
// a test, or a simulation. It is not safe for concurrent use; the pass actor owns it.
package pacing
