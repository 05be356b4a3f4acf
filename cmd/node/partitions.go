package main

import (
	"context"
	"fmt"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/retentionkit/retention/passes"
)

// printPartitions is status's partitions table, for the passes with partitions: only:
// how many wholly expired partitions are attached to the table now (at the status
// command's cutoff; a pending detach counts), and, when its last run left any, why, as
// the ledger's log row of that run says (contended: the retire phase could not take a
// lock within its lock_timeout; kept: left to the row path). "0" is nothing expired
// left, not a measurement that failed ("?"). The next sweep that retires them clears
// both columns.
func (n *node) printPartitions(ctx context.Context, w *tabwriter.Writer) error {
	header := false
	for _, p := range n.passes {
		opts := p.Options()
		if p.Table == nil || !opts.Enabled() {
			continue
		}
		count, ok, err := p.Table.ExpiredPartitions(ctx, opts.Cutoff(time.Now()))
		if !ok {
			continue
		}
		if !header {
			fmt.Fprintln(w)
			fmt.Fprintln(w, "PARTITIONS\tPASS\tEXPIRED LEFT\tWHY (LAST RUN)") // a row never starts with a pass name
			header = true
		}
		left := strconv.Itoa(count)
		if err != nil {
			left = "?"
		}
		fmt.Fprintf(w, "partitions\t%s\t%s\t%s\n", p.Name(), left, n.partitionsWhy(ctx, p.Name()))
	}
	return w.Flush()
}

// partitionsWhy is the last contended or kept partition report of the pass's last run
// in the ledger, "-" when it has none (or there is no ledger).
func (n *node) partitionsWhy(ctx context.Context, name string) string {
	if n.ledger == nil {
		return "-"
	}
	runs, err := n.ledger.Runs(ctx, name, 1)
	if err != nil || len(runs) == 0 {
		return "-"
	}
	logs, err := n.ledger.Logs(ctx, runs[0].ID)
	if err != nil {
		return "-"
	}
	for i := len(logs) - 1; i >= 0; i-- {
		if o, ok := passes.LoggedPartitionOutcome(logs[i].Message); ok && (o == passes.PartitionContended || o == passes.PartitionKept) {
			return logs[i].Message
		}
	}
	return "-"
}
