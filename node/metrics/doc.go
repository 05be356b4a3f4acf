// Package metrics is the runtime's Prometheus metrics: an observer that turns events into
// counters and gauges (Observer), a collector of what the runtime's status says (slots,
// pass settings, degraded passes), retention_build_info, and a collector that measures
// each table's backlog and held rows (BacklogCollector).
//
// It lives outside package main so that a service embedding the runtime registers the
// same metrics, with the same names, on its own registry; docs/metrics.md lists them.
package metrics
