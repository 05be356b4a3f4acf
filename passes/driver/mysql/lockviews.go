package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"strings"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes/driver"
)

// The lock views read GET_LOCK's own answers (IS_USED_LOCK: the connection id holding
// a name) and the server's process list (information_schema.PROCESSLIST) for the
// holder's address and for the sessions waiting. The process list shows a session
// without the PROCESS privilege only its own user's sessions: members that connect as
// one user see each other, and a holder the list hides is still counted and named by
// its connection id (IS_USED_LOCK sees every session).

// LockHolders reads IS_USED_LOCK for each key, joined with the process list for the
// holder's address and when it last started or finished a statement. The server keeps
// neither an application name nor a connection start time another session can read, so
// ApplicationName and BackendStart are left empty.
func (Driver) LockHolders(ctx context.Context, db bun.IDB, class int32, keys []int32) (map[int32]driver.LockHolder, error) {
	out := map[int32]driver.LockHolder{}
	if len(keys) == 0 {
		return out, nil
	}
	var b strings.Builder
	b.WriteString("SELECT t.k, t.id, COALESCE(p.HOST, ''), UTC_TIMESTAMP(6) - INTERVAL p.TIME SECOND FROM (")
	for i, k := range keys {
		if i > 0 {
			b.WriteString(" UNION ALL ")
		}
		fmt.Fprintf(&b, "SELECT %d AS k, IS_USED_LOCK(%s) AS id", k, lockNameSQL(class, k))
	}
	b.WriteString(") t LEFT JOIN information_schema.PROCESSLIST p ON p.ID = t.id WHERE t.id IS NOT NULL")
	rows, err := db.QueryContext(ctx, b.String())
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
	for rows.Next() {
		var key int32
		var h driver.LockHolder
		var host string
		var change sql.NullTime
		if err := rows.Scan(&key, &h.PID, &host, &change); err != nil {
			return nil, err
		}
		h.ClientAddr, h.StateChange = clientAddr(host), change.Time
		out[key] = h
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// clientAddr is the client's address from the process list's HOST ("10.0.0.5:43122"),
// without the port; "" for a Unix socket ("localhost"), as PostgreSQL shows one.
func clientAddr(host string) string {
	if host == "" || host == "localhost" {
		return ""
	}
	if h, _, err := net.SplitHostPort(host); err == nil {
		return h
	}
	if i := strings.LastIndexByte(host, ':'); i > 0 {
		return host[:i] // an IPv6 address with its port, written without brackets
	}
	return host
}

// LocksHeld counts the keys IS_USED_LOCK names a holder for.
func (Driver) LocksHeld(ctx context.Context, db bun.IDB, class int32, keys []int32) (int, error) {
	if len(keys) == 0 {
		return 0, nil
	}
	terms := make([]string, len(keys))
	for i, k := range keys {
		terms[i] = fmt.Sprintf("(IS_USED_LOCK(%s) IS NOT NULL)", lockNameSQL(class, k))
	}
	var n int
	err := db.QueryRowContext(ctx, "SELECT "+strings.Join(terms, " + ")).Scan(&n)
	return n, err
}

// LockLine counts the holder (IS_USED_LOCK) and the sessions waiting: those of the
// current database whose running statement is WaitSessionLock's for this lock, read
// from the process list by its text (the lock's class and key are written in it, and
// only a wait takes a lock with waitForever's timeout). The holder is not counted
// twice, nor the session asking.
func (Driver) LockLine(ctx context.Context, db bun.IDB, class, key int32) (int, error) {
	name := lockNameSQL(class, key)
	pattern := "%" + strings.ReplaceAll(waitStatementMarker(class, key), "'", "''") + fmt.Sprintf("%%, %d)%%", waitForever)
	q := fmt.Sprintf(`SELECT (IS_USED_LOCK(%[1]s) IS NOT NULL) + (SELECT COUNT(*) FROM information_schema.PROCESSLIST p
WHERE p.DB = DATABASE() AND p.COMMAND = 'Query' AND p.ID <> CONNECTION_ID()
  AND p.ID <> COALESCE(IS_USED_LOCK(%[1]s), 0) AND p.INFO LIKE '%[2]s')`, name, pattern)
	var n int
	err := db.QueryRowContext(ctx, q).Scan(&n)
	return n, err
}

// waitStatementMarker is the part of waitStatement that names its lock and no other
// statement of ours has: GET_LOCK of the name, up to its database hash.
func waitStatementMarker(class, key int32) string {
	return "GET_LOCK(CONCAT('" + lockKeyText(class, key) + "'"
}
