package mysql

import (
	"context"
	"database/sql"
	"errors"
	"time"

	gomysql "github.com/go-sql-driver/mysql"
	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes/driver"
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

// ReplicaLag reports no replica: a MySQL or MariaDB source keeps no lag of its
// replicas (each reports its own, in SHOW REPLICA STATUS on that replica), so the
// config lists the replicas to ask (ListsReplicas, ReplicaStatus) and the source has
// nothing to say.
func (Driver) ReplicaLag(context.Context, bun.IDB) (time.Duration, bool, error) {
	return 0, false, nil
}

// ListsReplicas is true: the config lists the replicas whose lag paces a sweep.
func (Driver) ListsReplicas() bool { return true }

// ReplicaStatus reads SHOW REPLICA STATUS on replica (SHOW SLAVE STATUS on a server
// older than MySQL 8.0.22, which knows no other spelling): no row means the server is
// no replica; Seconds_Behind_Source (MySQL 8.0.22+) or Seconds_Behind_Master is its
// lag, in whole seconds, NULL when a replication thread is stopped or the source is
// out of reach, which is not replicating. It needs REPLICATION CLIENT on MySQL and
// REPLICA MONITOR (or SLAVE MONITOR) on MariaDB. On a MariaDB replica of several
// sources it reads the default connection's.
func (Driver) ReplicaStatus(ctx context.Context, replica bun.IDB) (driver.ReplicaStatus, error) {
	rows, err := replica.QueryContext(ctx, "SHOW REPLICA STATUS")
	var me *gomysql.MySQLError
	if errors.As(err, &me) && me.Number == erParseError {
		rows, err = replica.QueryContext(ctx, "SHOW SLAVE STATUS")
	}
	if err != nil {
		return driver.ReplicaStatus{}, err
	}
	defer rows.Close()
	if !rows.Next() {
		return driver.ReplicaStatus{}, rows.Err()
	}
	lag, err := behindColumn(rows)
	if err != nil {
		return driver.ReplicaStatus{}, err
	}
	st := driver.ReplicaStatus{Replica: true, Replicating: lag.Valid, Lag: time.Duration(lag.Int64) * time.Second}
	return st, rows.Close()
}

// erParseError is MySQL's ER_PARSE_ERROR, a statement the server does not know.
const erParseError = 1064

// behindColumn scans the current row of SHOW REPLICA STATUS and returns its
// Seconds_Behind_Source (or _Master) column.
func behindColumn(rows *sql.Rows) (sql.NullInt64, error) {
	cols, err := rows.Columns()
	if err != nil {
		return sql.NullInt64{}, err
	}
	values := make([]any, len(cols))
	var lag sql.NullInt64
	found := false
	for i, c := range cols {
		values[i] = new(sql.RawBytes)
		if c == "Seconds_Behind_Source" || c == "Seconds_Behind_Master" {
			values[i], found = &lag, true
		}
	}
	if !found {
		return sql.NullInt64{}, errors.New("SHOW REPLICA STATUS has no Seconds_Behind_Source or Seconds_Behind_Master column")
	}
	return lag, rows.Scan(values...)
}

// CommitProbe reports none yet: InnoDB's commit waits (the redo log flush) are not
// probed on MySQL/MariaDB, which pace on the read probe and the blocked sessions.
func (Driver) CommitProbe(context.Context, bun.IDB) (bool, error) { return false, nil }
