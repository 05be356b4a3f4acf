package admin

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/retentionkit/retention/passes"
)

// ClusterSource tells the admin routes what cluster mode knows: the members, who owns
// each pass and who holds its lock. The node's cluster package implements it; a node
// outside cluster mode leaves Config.Cluster nil and GET /cluster answers
// {"enabled": false}, so a dashboard or a script can ask any node the same question.
type ClusterSource interface {
	ClusterView(ctx context.Context) (ClusterView, error)
}

// ClusterView is the body of GET /cluster. Owner is where protoactor places a pass's
// grain; LockHolder is who the database says is sweeping it right now, read through
// the driver's LockViews (passes.LockHolders). The two differ for moments during
// topology changes, and only the lock decides who deletes, so both are shown.
type ClusterView struct {
	Enabled bool            `json:"enabled"`
	Name    string          `json:"name,omitempty"`
	Member  *ClusterMember  `json:"member,omitempty"`
	Members []ClusterMember `json:"members,omitempty"`
	Passes  []ClusterPass   `json:"passes,omitempty"`
	// Slots are the cluster-wide delete slots per database.
	Slots []ClusterSlots `json:"slots,omitempty"`
	// ReadAt is when the view was assembled.
	ReadAt time.Time `json:"read_at"`
}

// ClusterMember is one member of the topology.
type ClusterMember struct {
	ID      string `json:"id"`
	Address string `json:"address"`
}

// ClusterPass is one pass identity (a pass, or a drain helper "name#k").
type ClusterPass struct {
	Name       string                 `json:"name"`
	Owner      string                 `json:"owner"` // member id; empty while unplaced
	LockHolder *passes.LockHolderInfo `json:"lock_holder,omitempty"`
	Helpers    []ClusterPass          `json:"helpers,omitempty"`
}

// ClusterSlots is one database's cluster-wide limit on concurrent deletes.
type ClusterSlots struct {
	Database string `json:"database"`
	InUse    int    `json:"in_use"`
	Capacity int    `json:"capacity"`
}

// cluster serves GET /cluster.
func (h *Handler) cluster(w http.ResponseWriter, r *http.Request) {
	view := ClusterView{Enabled: false, ReadAt: time.Now().UTC()}
	if h.cfg.Cluster != nil {
		v, err := h.cfg.Cluster.ClusterView(r.Context())
		if err != nil {
			http.Error(w, "cluster view: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		view = v
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(view)
}
