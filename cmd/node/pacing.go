package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/retentionkit/retention/passes"
)

// printPacing is status's pacing table: each pass's mode and the bounds its batches
// and pauses keep. A fixed pass deletes exactly its batch size and pauses exactly its
// delay; an adaptive one chooses within them (the live pace is in GET /passes and the
// retention_pace_* metrics of the running node).
func (n *node) printPacing(w *tabwriter.Writer) error {
	fmt.Fprintln(w)
	fmt.Fprintln(w, "PACING\tPASS\tBATCH\tPAUSE") // mode first: a row never starts with a pass name
	for _, p := range n.passes {
		o := p.Options()
		mode, batch, pause := string(passes.PacingFixed), fmt.Sprint(o.BatchSize), o.BatchDelay.String()
		if o.Adaptive() {
			mode, batch, pause = string(passes.PacingAdaptive), fmt.Sprintf("<=%d", o.BatchSize), fmt.Sprintf(">=%v", o.BatchDelay)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", mode, p.Name(), batch, pause)
	}
	return w.Flush()
}
