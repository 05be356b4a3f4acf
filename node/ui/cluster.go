package ui

import "github.com/retentionkit/retention/node/admin"

// clusterView is the cluster page: what admin.ClusterSource says, or that cluster mode
// is off.
type clusterView struct {
	Off      bool
	View     admin.ClusterView
	Problems []string
}

func (v clusterView) problems() []string { return v.Problems }

func (h *Handler) clusterPage(r *request) (string, any) {
	if h.cfg.Cluster == nil {
		return "cluster", clusterView{Off: true}
	}
	var pr problems
	cv, err := h.cfg.Cluster.ClusterView(r.ctx)
	pr.add("cluster", err, h.cfg.Redact)
	return "cluster", clusterView{View: cv, Problems: pr.list}
}
