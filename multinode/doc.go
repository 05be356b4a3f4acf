// Package multinode is the cluster-mode end-to-end suite (`make multinode`;
// docs/cluster.md, "Tested failures"). Each scenario starts a private etcd on free
// ports and three or more `retention run` processes on 127.0.0.1 against one
// PostgreSQL database (and, for the scenarios that run as a mariadb subtest too, one
// MariaDB database, each node connecting as its own user; see harness/db_mysql.go), seeds tables with large backlogs, writes the keys that must
// survive into a keep table in SQL before the nodes start, injects a fault (SIGKILL,
// SIGSTOP past the membership TTL, an etcd outage, SIGTERM) and then checks, in SQL:
// nothing in the keep table is gone, nothing expired is left, no two sessions deleted
// from one pass's table at once, every batch ran under its pass's advisory lock and a
// cluster-wide slot, and the slots in use never exceeded the cluster-wide limit.
//
// The scenarios run only with their build tag and never under the race detector:
// protoactor's cluster races inside itself at the version the project pins.
//
//	go test -tags multinode -count=1 -v -timeout 25m ./multinode/
//
// They need etcd (Debian's etcd-server, /usr/bin/etcd or ETCD_BIN) and PostgreSQL
// (TEST_DATABASE_URL); the mariadb subtests need TEST_MYSQL_URL and the node users
// rt_mn_n1 to rt_mn_n3 (docs/cluster.md). Locally a missing one skips the suite with a loud message; under
// CI=true it fails it. The logs of every process of a failed scenario are kept under
// multinode/testdata/artifacts/<test>/ (MULTINODE_KEEP_LOGS=1 keeps them for passing
// scenarios too).
//
// The package multinode/harness holds the process manager the scenarios and the
// cluster benchmarks (bench/cluster) share.
package multinode
