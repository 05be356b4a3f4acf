// Package chaos is the project's fault suite (`make chaos`; docs/reliability.md). It
// builds the node binary, starts a PostgreSQL cluster of its own on a free port (so it
// may crash and restart it), and drives the node through faults: killed backends, a
// server restart, a tiny statement timeout, locked rows and children, a deadlock,
// restricting foreign keys the configuration does not list, SIGKILL, three nodes on
// one table, a table dropped and restored, a locked SQLite file, and rows inserted
// across the cutoff. On MariaDB it starts a server of its own too (the first MariaDB
// scenario starts it, on a free port, with a data directory under the suite's
// temporary directory) and drives the node through killed sessions, a server killed
// and restarted, a SIGKILL of the node, a lock held past innodb_lock_wait_timeout, and
// a deadlock.
// Every scenario compares the tables with a keep-set computed in SQL
// before the node ran, checks that no parent was half deleted, reads the ledger, and
// checks the exit code.
//
// The tests run only with their build tag, so `go test ./...` leaves them out:
//
//	go test -race -tags chaos -count=1 -v ./chaos/
//
// They need root (pg_createcluster, pg_ctlcluster) and PostgreSQL's server packages;
// the MariaDB scenarios need MariaDB's (mariadb-install-db, mariadbd) and skip without
// them, except under CI=true, where they fail.
package chaos
