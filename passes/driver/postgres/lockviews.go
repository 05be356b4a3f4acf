package postgres

import (
	"context"
	"database/sql"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes/driver"
)

// objIDs are keys as pg_locks shows an int4 advisory key: as an unsigned oid.
func objIDs(keys []int32) []int64 {
	out := make([]int64, len(keys))
	for i, k := range keys {
		out[i] = objID(k)
	}
	return out
}

func objID(k int32) int64 { return int64(uint32(k)) }

// inThisDatabase limits pg_locks to two-key advisory locks (objsubid 2) of the current
// database: advisory locks are per database.
const inThisDatabase = `l.locktype = 'advisory' AND l.objsubid = 2
  AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())`

// LockHolders reads pg_locks joined with pg_stat_activity.
func (Driver) LockHolders(ctx context.Context, db bun.IDB, class int32, keys []int32) (map[int32]driver.LockHolder, error) {
	out := map[int32]driver.LockHolder{}
	if len(keys) == 0 {
		return out, nil
	}
	rows, err := db.QueryContext(ctx, `SELECT l.objid::bigint, a.pid, coalesce(a.application_name, ''),
	coalesce(host(a.client_addr), ''), a.backend_start, a.state_change
FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
WHERE `+inThisDatabase+` AND l.granted
  AND l.classid::bigint = ? AND l.objid::bigint IN (?)`, objID(class), bun.List(objIDs(keys)))
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
	for rows.Next() {
		var key int64
		var h driver.LockHolder
		var start, change sql.NullTime
		if err := rows.Scan(&key, &h.PID, &h.ApplicationName, &h.ClientAddr, &start, &change); err != nil {
			return nil, err
		}
		h.BackendStart, h.StateChange = start.Time, change.Time
		out[int32(uint32(key))] = h
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// LocksHeld counts granted rows of pg_locks.
func (Driver) LocksHeld(ctx context.Context, db bun.IDB, class int32, keys []int32) (int, error) {
	var n int
	err := db.QueryRowContext(ctx, `SELECT count(*) FROM pg_locks l
WHERE `+inThisDatabase+` AND l.granted
  AND l.classid::bigint = ? AND l.objid::bigint IN (?)`, objID(class), bun.List(objIDs(keys))).Scan(&n)
	return n, err
}

// LockLine counts rows of pg_locks for the lock, granted or waiting.
func (Driver) LockLine(ctx context.Context, db bun.IDB, class, key int32) (int, error) {
	var n int
	err := db.QueryRowContext(ctx, `SELECT count(*) FROM pg_locks l
WHERE `+inThisDatabase+`
  AND l.classid::bigint = ? AND l.objid::bigint = ?`, objID(class), objID(key)).Scan(&n)
	return n, err
}
