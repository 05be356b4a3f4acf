package main

import (
	"context"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/retentionkit/retention/passes/ledger"
)

// printRetirements is status's partition journal table: for each table pass with an
// entry, the latest entry the ledger's journal holds, so an operator sees what
// was last retired (or is still marked retiring: a node that stopped between the drop
// and the outcome's write leaves it so, and the catalog says what became of the
// partition) without querying the ledger. A pass with no entry, a ledger without the
// journal's table (not migrated yet) or no ledger prints nothing.
func (n *node) printRetirements(ctx context.Context, w *tabwriter.Writer) error {
	if n.ledger == nil {
		return nil
	}
	ok, err := n.ledger.HasTable(ctx, "partition_retirements")
	if err != nil || !ok {
		return nil
	}
	header := false
	for _, p := range n.passes {
		// A pass without partitions: has no entry, so asking costs one empty read.
		if p.Table == nil {
			continue
		}
		entries, err := n.ledger.PartitionRetirements(ctx, p.Name(), 1)
		if err != nil || len(entries) == 0 {
			continue
		}
		if !header {
			fmt.Fprintln(w)
			fmt.Fprintln(w, "RETIRED\tPASS\tPARTITION\tBOUNDS\tESTIMATED ROWS\tMODE\tOUTCOME\tSTARTED") // a row never starts with a pass name
			header = true
		}
		fmt.Fprintf(w, "retired\t%s\n", retirementLine(p.Name(), entries[0]))
	}
	return w.Flush()
}

// retirementLine is one journal entry as status prints it: the estimate keeps its
// prefix "~" so it is never read as a count.
func retirementLine(pass string, e ledger.PartitionRetirement) string {
	rows := "unknown"
	if e.EstimatedRows >= 0 {
		rows = fmt.Sprintf("~%d", e.EstimatedRows)
	}
	outcome := e.Outcome
	if e.Reason != nil {
		outcome += ": " + *e.Reason
	}
	return fmt.Sprintf("%s\t%s\t[%s, %s)\t%s\t%s\t%s\t%s", pass, e.Partition, e.Lower, e.Upper, rows, e.Mode, outcome, e.StartedAt.UTC().Format(time.RFC3339))
}
