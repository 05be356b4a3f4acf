package cluster

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/cluster"
	"github.com/asynkron/protoactor-go/cluster/clusterproviders/etcd"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/retentionkit/retention/node/admin"
)

// Snapshot is the cluster as etcd records it, for a command that is not a member
// (retention status): the members registered now, and who owns each identity by the
// same rendezvous hash the members place by.
type Snapshot struct {
	Members []admin.ClusterMember
	// Owners maps each identity asked about to its owner's member id ("" when there is
	// no member).
	Owners map[string]string
}

// ReadSnapshot reads the members registered under o's prefix and cluster name, and
// places identities over them. It only reads etcd; it joins nothing.
func ReadSnapshot(ctx context.Context, o Options, identities []string) (Snapshot, error) {
	o = o.withDefaults()
	cli, err := clientv3.New(etcdConfig(o))
	if err != nil {
		return Snapshot{}, fmt.Errorf("cluster: etcd at %s: %w", strings.Join(o.Endpoints, ", "), err)
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	key := strings.TrimSuffix(o.Prefix, "/") + "/" + o.Name + "/"
	resp, err := cli.Get(ctx, key, clientv3.WithPrefix())
	if err != nil {
		return Snapshot{}, fmt.Errorf("cluster: etcd at %s: %w", strings.Join(o.Endpoints, ", "), err)
	}
	var members cluster.Members
	for _, kv := range resp.Kvs {
		n, err := etcd.NewNodeFromBytes(kv.Value)
		if err != nil || !n.Alive {
			continue
		}
		members = append(members, n.MemberStatus())
	}
	s := Snapshot{Owners: map[string]string{}}
	ids := map[string]string{}
	for _, m := range members {
		ids[m.Address()] = memberID(m)
		s.Members = append(s.Members, admin.ClusterMember{ID: memberID(m), Address: m.Address()})
	}
	sort.Slice(s.Members, func(i, j int) bool { return s.Members[i].ID < s.Members[j].ID })
	rdv := cluster.NewRendezvous()
	rdv.UpdateMembers(members)
	for _, id := range identities {
		s.Owners[id] = ids[rdv.GetByClusterIdentity(cluster.NewClusterIdentity(id, Kind))]
	}
	return s, nil
}
