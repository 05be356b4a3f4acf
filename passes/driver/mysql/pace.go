package mysql

import (
	"context"
	"time"

	"github.com/uptrace/bun"
)

// Blocked counts the transactions waiting on a lock the session backend holds:
// information_schema.INNODB_LOCK_WAITS on MariaDB, performance_schema.data_lock_waits
// on MySQL 8 (which dropped INNODB_LOCK_WAITS), each joined with INNODB_TRX for the
// blocking transaction's connection. Both need the PROCESS privilege; without it the
// read fails, and the pacing counts the signal unknown and runs on its others. InnoDB
// fills these tables from a cache it refreshes only when last read over 0.1 s ago, so
// a reading can be that stale; the pacing reads every half second.
func (Driver) Blocked(ctx context.Context, db bun.IDB, backend int) (int, error) {
	v, err := sessionVersion(ctx, db)
	if err != nil {
		return 0, err
	}
	q := `SELECT COUNT(DISTINCT w.requesting_trx_id) FROM information_schema.INNODB_LOCK_WAITS w
		JOIN information_schema.INNODB_TRX t ON t.trx_id = w.blocking_trx_id WHERE t.trx_mysql_thread_id = ?`
	if !v.mariaDB {
		q = `SELECT COUNT(DISTINCT w.REQUESTING_ENGINE_TRANSACTION_ID) FROM performance_schema.data_lock_waits w
			JOIN information_schema.INNODB_TRX t ON t.trx_id = w.BLOCKING_ENGINE_TRANSACTION_ID WHERE t.trx_mysql_thread_id = ?`
	}
	var n int
	err = db.QueryRowContext(ctx, q, backend).Scan(&n)
	return n, err
}

// BusySessions counts the sessions of information_schema.PROCESSLIST on the current
// database whose command is not Sleep (running a statement), other than the reading
// session and backend: the MySQL counterpart of pt-online-schema-change's
// Threads_running, kept to the database. A session idle inside a transaction shows
// Sleep and is not counted. Without the PROCESS privilege only the user's own sessions
// are listed.
func (Driver) BusySessions(ctx context.Context, db bun.IDB, backend int) (int, bool, error) {
	var n int
	err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM information_schema.PROCESSLIST
		WHERE DB = DATABASE() AND COMMAND NOT IN ('Sleep', 'Daemon', 'Binlog Dump', 'Killed')
		AND ID <> CONNECTION_ID() AND ID <> ?`, backend).Scan(&n)
	return n, err == nil, err
}

// ReplicaLag reports no replica, on purpose: a MySQL or MariaDB source keeps no lag of
// its replicas (each replica reports its own, in SHOW REPLICA STATUS on that replica),
// and the node talks to the source alone; the config lists no replica to ask. Reporting
// none is the honest answer, and the pacing then runs on its probe and blocked
// sessions.
func (Driver) ReplicaLag(context.Context, bun.IDB) (time.Duration, bool, error) {
	return 0, false, nil
}

// CommitProbe reports none yet: InnoDB's commit waits (the redo log flush) are not
// probed on MySQL/MariaDB, which pace on the read probe and the blocked sessions.
func (Driver) CommitProbe(context.Context, bun.IDB) (bool, error) { return false, nil }
