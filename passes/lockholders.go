package passes

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/uptrace/bun"
)

// MemberAppPrefix starts the application_name of every connection a cluster member
// sweeps on ("retention:<member-id>"), so a lock's holder names its member.
const MemberAppPrefix = "retention:"

// LockHolderInfo is the PostgreSQL session holding an identity's sweep lock, as
// pg_locks and pg_stat_activity show it. It is the one definition of a lock holder: the
// sweep lock's contention error, GET /cluster and the dashboard all carry this type, so
// a field added here reaches every one of them. The JSON names are the admin API's.
type LockHolderInfo struct {
	// PID is the holder's backend process.
	PID int `json:"pid"`
	// ApplicationName is the session's application_name; Member is the member id read
	// from it when it is one of ours ("retention:<id>"), else empty.
	ApplicationName string `json:"application_name"`
	Member          string `json:"member,omitempty"`
	// ClientAddr is the client's address; empty over a Unix socket or when our role may
	// not see it.
	ClientAddr string `json:"client_addr,omitempty"`
	// BackendStart is when the holder's connection opened: the lock is at most that old,
	// and a connection reused from a pool may be older than its sweep. StateChange is
	// when the session last started or finished a statement, so an old StateChange on
	// an idle holder says its sweep is stuck between batches.
	BackendStart time.Time `json:"since,omitzero"`
	StateChange  time.Time `json:"state_change,omitzero"`
}

// LockHolders returns who holds the sweep lock of each identity that is locked right
// now; an identity nobody holds is absent. Identities whose keys collide (see LockKey)
// get the same holder. It reads PostgreSQL's views, so it needs PostgreSQL.
func LockHolders(ctx context.Context, db bun.IConn, identities []string) (map[string]LockHolderInfo, error) {
	out := map[string]LockHolderInfo{}
	if len(identities) == 0 {
		return out, nil
	}
	byKey := map[int64][]string{}
	keys := make([]int64, 0, len(identities))
	for _, id := range identities {
		k := lockObjID(LockKey(id))
		if _, seen := byKey[k]; !seen {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], id)
	}
	rows, err := db.QueryContext(ctx, `SELECT l.objid::bigint, a.pid, coalesce(a.application_name, ''),
	coalesce(host(a.client_addr), ''), a.backend_start, a.state_change
FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
  AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
  AND l.classid::bigint = ? AND l.objid::bigint IN (?)`, lockObjID(SweepLockClass), bun.List(keys))
	if err != nil {
		return nil, fmt.Errorf("read the sweep lock holders: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var key int64
		var h LockHolderInfo
		var start, change sql.NullTime
		if err := rows.Scan(&key, &h.PID, &h.ApplicationName, &h.ClientAddr, &start, &change); err != nil {
			return nil, fmt.Errorf("read the sweep lock holders: %w", err)
		}
		h.BackendStart, h.StateChange = start.Time, change.Time
		h.Member = MemberOf(h.ApplicationName)
		for _, id := range byKey[key] {
			out[id] = h
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the sweep lock holders: %w", err)
	}
	return out, nil
}

// MemberOf returns the member id in an application_name of ours ("retention:<id>"), or
// "" for any other.
func MemberOf(applicationName string) string {
	id, ok := strings.CutPrefix(applicationName, MemberAppPrefix)
	if !ok {
		return ""
	}
	return id
}

// lockObjID is how pg_locks shows an int4 advisory key: as an unsigned oid.
func lockObjID(k int32) int64 { return int64(uint32(k)) }
