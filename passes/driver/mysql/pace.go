package mysql

import (
	"context"
	"time"

	"github.com/uptrace/bun"
)

// Blocked counts the transactions waiting on a lock the session backend holds:
// performance_schema.data_lock_waits on MySQL 8 (INNODB_LOCK_WAITS is gone there),
// information_schema.INNODB_LOCK_WAITS on MariaDB. Both need the PROCESS privilege.
func (Driver) Blocked(ctx context.Context, db bun.IDB, backend int) (int, error) {
	var text string
	if err := db.QueryRowContext(ctx, "SELECT VERSION()").Scan(&text); err != nil {
		return 0, err
	}
	v, err := parseVersion(text)
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

// ReplicaLag reports no replica: a MySQL source does not know its replicas' lag (each
// replica reports its own in SHOW REPLICA STATUS), and reading it needs the replicas'
// DSNs, which the config does not list yet.
func (Driver) ReplicaLag(context.Context, bun.IDB) (time.Duration, bool, error) {
	return 0, false, nil
}

// CommitProbe reports none yet: InnoDB's commit waits (the redo log flush) are not
// probed on MySQL/MariaDB, which pace on the read probe and the blocked sessions.
func (Driver) CommitProbe(context.Context, bun.IDB) (bool, error) { return false, nil }
