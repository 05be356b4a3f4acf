package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	rnode "github.com/retentionkit/retention/node"
	"github.com/retentionkit/retention/node/cluster"
	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/ledger"
)

// printCluster is status's cluster part: the members etcd lists, and for each pass (and
// drain helper) its owner by placement and the holder of its lock by PostgreSQL. The
// two differ for moments while members come and go; only the lock decides who deletes.
func (n *node) printCluster(ctx context.Context, out io.Writer) error {
	if !n.cfg.Cluster.Enabled {
		return nil
	}
	var ids []string
	for _, p := range n.passes {
		ids = append(ids, p.Name())
		for k := 1; p.IsTable() && k <= n.cfg.Cluster.DrainHelpers; k++ {
			ids = append(ids, cluster.HelperName(p.Name(), k))
		}
	}
	if n.ledger != nil {
		ids = append(ids, ledger.NameRunRecovery, ledger.NameMetadataCleanup, ledger.NameDeadLetterCleanup)
	}
	fmt.Fprintln(out)
	snap, err := cluster.ReadSnapshot(ctx, rnode.ClusterOptions(n.cfg, n.log), ids)
	if err != nil {
		_, err = fmt.Fprintf(out, "cluster %s: cannot read the members: %v\n", rnode.ClusterOptions(n.cfg, n.log).Name, err)
		return err
	}
	holders, herr := rnode.LockReader(n.tables.DB, n.cfg)(ctx, ids)
	w := tabwriter.NewWriter(out, 0, 2, 2, ' ', 0)
	fmt.Fprintln(w, "MEMBER\tADDRESS")
	for _, m := range snap.Members {
		fmt.Fprintf(w, "%s\t%s\n", m.ID, m.Address)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "PASS\tOWNER\tLOCK HOLDER")
	for _, id := range ids {
		holder := "-"
		if h, ok := holders[id]; ok {
			holder = fmt.Sprintf("%s (backend %d)", h.Member, h.PID)
			if h.Member == "" {
				holder = fmt.Sprintf("%s (backend %d)", h.ApplicationName, h.PID)
			}
		}
		owner := snap.Owners[id]
		if owner == "" {
			owner = "-"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\n", id, owner, holder)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if herr != nil {
		fmt.Fprintf(out, "lock holders: not read: %s\n", passes.RedactTextFor(n.cfg.Database.Driver, herr.Error(), n.cfg.Database.DSN))
	}
	_, err = fmt.Fprintf(out, "cluster %s: %s\n", rnode.ClusterOptions(n.cfg, n.log).Name, counted(len(snap.Members), "member", "members"))
	return err
}
