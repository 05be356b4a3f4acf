package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/retentionkit/retention/passes/ledger"
)

// stamp is how the CLI prints a moment: RFC 3339 in the local zone, with the zone's
// offset, so a time read off one machine means the same on another.
func stamp(t time.Time) string { return t.Local().Format(time.RFC3339) }

// liveNodes splits the ledger's nodes at now into those alive (a heartbeat within
// ledger.DefaultStaleAfter, the bound recovery uses too) and the most recent of the
// others, nil when there is none.
func liveNodes(ctx context.Context, l *ledger.Ledger, now time.Time) (live []ledger.Node, lastGone *ledger.Node, err error) {
	nodes, err := l.Nodes(ctx)
	if err != nil {
		return nil, nil, err
	}
	for i, nd := range nodes {
		if now.Sub(nd.Heartbeat) > ledger.DefaultStaleAfter {
			return live, &nodes[i], nil // latest heartbeat first: the rest are gone too
		}
		live = append(live, nd)
	}
	return live, nil, nil
}

// printNodes prints the nodes alive now (a table) or, when none is, says so: with no
// live node nothing runs scheduled or queued sweeps.
func (n *node) printNodes(ctx context.Context, out io.Writer) error {
	if n.ledger == nil {
		_, err := fmt.Fprintln(out, "nodes: not known: the ledger is disabled (ledger.enabled is false), and nodes heartbeat in it")
		return err
	}
	live, gone, err := liveNodes(ctx, n.ledger, time.Now())
	if err != nil {
		_, err = fmt.Fprintf(out, "nodes: cannot read the heartbeats: %v\n", err)
		return err
	}
	if len(live) == 0 {
		_, err := fmt.Fprintln(out, noLiveNode(gone))
		return err
	}
	w := tabwriter.NewWriter(out, 0, 2, 2, ' ', 0)
	fmt.Fprintln(w, "NODE\tHOST\tPID\tSTARTED\tLAST HEARTBEAT")
	for _, nd := range live {
		fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%s\n", nd.ID, nd.Host, nd.PID, stamp(nd.Started), stamp(nd.Heartbeat))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "nodes alive: %d (a heartbeat within the last %v)\n", len(live), ledger.DefaultStaleAfter)
	return err
}

// noLiveNode says that no node is alive, and which was last seen.
func noLiveNode(gone *ledger.Node) string {
	msg := fmt.Sprintf("no node is alive: none has sent a heartbeat within the last %v", ledger.DefaultStaleAfter)
	if gone != nil {
		msg += fmt.Sprintf(" (the last was node %s on %s, pid %d, at %s)", gone.ID, gone.Host, gone.PID, stamp(gone.Heartbeat))
	}
	return msg + "; scheduled and queued sweeps wait until a node runs (retention run)"
}
