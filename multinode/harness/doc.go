// Package harness runs a retention cluster on one host for the multi-process suite
// (package multinode) and the cluster benchmarks (bench/cluster): a private etcd on
// free ports that can be stopped, frozen and restarted; `retention run` processes with
// their logs captured to files, signalled like a process manager would and restarted
// when they fence themselves (exit 3); and a PostgreSQL fixture that seeds backlogs,
// writes the keep-set in SQL before the nodes start, and records every committed batch
// with the advisory locks its session held, so the checks read what the database saw
// rather than what the nodes say about themselves.
//
// It returns errors instead of failing tests, so a benchmark program can use it too;
// the suite wraps it in testing helpers.
package harness
