package cluster

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/retentionkit/retention/node/admin"
	"github.com/retentionkit/retention/passes"
)

// LockReader reads who holds each identity's sweep lock from the database (the
// driver's LockViews, through passes.LockHolders); identities nobody holds are absent
// from the map. The node backs it with the passes package's reader; nil shows no
// holder.
type LockReader func(ctx context.Context, identities []string) (map[string]passes.LockHolderInfo, error)

// SlotReader reads the cluster-wide delete slots per database. nil reports this
// member's admission pools as the runtime sees them.
type SlotReader func(ctx context.Context) ([]admin.ClusterSlots, error)

// SetReaders gives the member what it reads PostgreSQL through for /cluster, status and
// the slot gauge. Call it before Serve.
func (m *Member) SetReaders(locks LockReader, slots SlotReader) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.locks, m.slotReader = locks, slots
}

// ClusterView implements admin.ClusterSource: this member, the members, and for each
// pass its owner by placement, the holder of its lock by PostgreSQL, and its drain
// helpers with theirs.
func (m *Member) ClusterView(ctx context.Context) (admin.ClusterView, error) {
	v := admin.ClusterView{Enabled: true, Name: m.o.Name, ReadAt: time.Now().UTC()}
	v.Member = &admin.ClusterMember{ID: m.ID(), Address: m.Address()}
	p := m.placement()
	for addr, id := range p.ids {
		v.Members = append(v.Members, admin.ClusterMember{ID: id, Address: addr})
	}
	sort.Slice(v.Members, func(i, j int) bool { return v.Members[i].ID < v.Members[j].ID })
	rt := m.rt.Load()
	if rt == nil {
		return v, nil
	}
	names := rt.PassNames()
	holders := map[string]passes.LockHolderInfo{}
	m.mu.Lock()
	locks := m.locks
	m.mu.Unlock()
	if locks != nil {
		var err error
		if holders, err = locks(ctx, names); err != nil {
			return admin.ClusterView{}, fmt.Errorf("lock holders: %w", err)
		}
	}
	entry := func(name string) admin.ClusterPass {
		cp := admin.ClusterPass{Name: name, Owner: p.ids[p.ownerOf(name)]}
		if h, ok := holders[name]; ok {
			cp.LockHolder = &h
		}
		return cp
	}
	byName := map[string]int{}
	for _, name := range names {
		if base, ok := HelperOf(name); ok {
			if i, found := byName[base]; found {
				v.Passes[i].Helpers = append(v.Passes[i].Helpers, entry(name))
			}
			continue
		}
		byName[name] = len(v.Passes)
		v.Passes = append(v.Passes, entry(name))
	}
	slots, err := m.slots(ctx)
	if err != nil {
		return admin.ClusterView{}, fmt.Errorf("slots: %w", err)
	}
	v.Slots = slots
	return v, nil
}

// slots reads the cluster-wide slots, or this member's pools without a reader.
func (m *Member) slots(ctx context.Context) ([]admin.ClusterSlots, error) {
	m.mu.Lock()
	read := m.slotReader
	m.mu.Unlock()
	if read != nil {
		return read(ctx)
	}
	rt := m.rt.Load()
	if rt == nil {
		return nil, nil
	}
	var out []admin.ClusterSlots
	for db, s := range rt.Status().Slots {
		out = append(out, admin.ClusterSlots{Database: db, InUse: s.InUse, Capacity: s.Capacity})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Database < out[j].Database })
	return out, nil
}
