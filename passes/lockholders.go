package passes

import (
	"context"
	"fmt"
	"strings"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes/driver"
)

// MemberAppPrefix starts the application_name of every connection a cluster member
// sweeps on ("retention:<member-id>"), so a lock's holder names its member.
const MemberAppPrefix = "retention:"

// LockHolderInfo is the session holding an identity's sweep lock, as the server shows
// it: the driver seam's LockHolder, the one definition of a lock holder (the sweep
// lock's contention error, GET /cluster and the dashboard all carry it).
type LockHolderInfo = driver.LockHolder

// LockHolders returns who holds the sweep lock of each identity that is locked right
// now; an identity nobody holds is absent. Identities whose keys collide (see LockKey)
// get the same holder. It reads the server's lock tables through db's driver
// (LockHolders of driver.LockViews), so it needs a driver with session locks; on
// another its error wraps ErrClusterUnsupported.
func LockHolders(ctx context.Context, db bun.IDB, identities []string) (map[string]LockHolderInfo, error) {
	out := map[string]LockHolderInfo{}
	if len(identities) == 0 {
		return out, nil
	}
	d, err := DriverFor(db)
	if err != nil {
		return nil, fmt.Errorf("read the sweep lock holders: %w", err)
	}
	byKey := map[int32][]string{}
	keys := make([]int32, 0, len(identities))
	for _, id := range identities {
		k := LockKey(id)
		if _, seen := byKey[k]; !seen {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], id)
	}
	held, err := d.LockHolders(ctx, db, SweepLockClass, keys)
	if err != nil {
		return nil, fmt.Errorf("read the sweep lock holders: %w", err)
	}
	for key, h := range held {
		h.Member = MemberOf(h.ApplicationName)
		for _, id := range byKey[key] {
			out[id] = h
		}
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
