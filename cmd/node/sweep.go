package main

import (
	"context"
	"fmt"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/retentionkit/retention/actors"
)

func sweepCommand(o *options) *cobra.Command {
	var only []string
	var drain, dry bool
	var progressMode string
	cmd := &cobra.Command{
		Use:   "sweep",
		Short: "Sweep the passes once, now",
		Example: `  retention sweep --config retention.yaml
  retention sweep --config retention.yaml --pass audit-log --drain
  retention sweep --config retention.yaml --dry-run`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.withNode(cmd.Context(), func(n *node) error {
				for _, name := range only {
					if !n.hasPass(name) {
						return badConfig(fmt.Errorf("--pass %q: no such pass in the configuration", name))
					}
				}
				if err := n.startupValidate(cmd.Context()); err != nil {
					return err
				}
				if dry {
					return n.dryRun(cmd.Context(), only, o)
				}
				if err := n.migrate(cmd.Context()); err != nil {
					return err
				}
				return n.sweep(cmd.Context(), only, drain, progressMode, o)
			})
		},
	}
	cmd.Flags().StringArrayVar(&only, "pass", nil, "sweep only this pass (repeatable)")
	cmd.Flags().BoolVar(&drain, "drain", false, "repeat sweeps until one ends short of a full batch")
	cmd.Flags().BoolVar(&dry, "dry-run", false, "count what would be deleted; delete nothing")
	cmd.Flags().StringVar(&progressMode, "progress", "auto", "progress bars: auto (on a terminal), always or never")
	return cmd
}

func (n *node) selected(only []string) []int {
	var idx []int
	for i, r := range n.regs {
		if (len(only) == 0 || slices.Contains(only, r.Name)) && r.Options.Enabled() {
			idx = append(idx, i)
		}
	}
	return idx
}

func (n *node) dryRun(ctx context.Context, only []string, o *options) error {
	w := tabwriter.NewWriter(o.stdout, 0, 2, 2, ' ', 0)
	fmt.Fprintln(w, "PASS\tWOULD DELETE\tKEPT BY HOLDS\tCUTOFF")
	for _, i := range n.selected(only) {
		cutoff := time.Now().Add(-*n.regs[i].Options.RetentionPeriod)
		res, err := n.tables[i].DryRun(ctx, cutoff)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "%s\t%d\t%d\t%s\n", n.regs[i].Name, res.Eligible, res.Blocked, cutoff.UTC().Format(time.RFC3339))
	}
	return w.Flush()
}

// sweepTotals adds up one pass's sweeps.
type sweepTotals struct {
	rows, skipped, batches, sweeps int
	duration                       time.Duration
	reason                         actors.StopReason
	failed                         error
}

// sweep runs one sweep of every selected pass on a runtime (with --drain, more while
// the last one reports work remaining), printing a line per batch and a summary.
func (n *node) sweep(ctx context.Context, only []string, drain bool, progressMode string, o *options) error {
	idx := n.selected(only)
	switch progressMode {
	case "auto", "always", "never":
	default:
		return usageError{fmt.Errorf("--progress %q: want auto, always or never", progressMode)}
	}
	var names []string
	for _, i := range idx {
		names = append(names, n.regs[i].Name)
	}
	events := make(chan actors.Event, 1024)
	show := n.newProgress(ctx, o.stdout, progressMode, idx)
	if err := n.join(ctx); err != nil {
		return err
	}
	rt, err := n.runtime(names, false, true, actors.ObserverFunc(func(e actors.Event) error {
		events <- e
		return nil
	}))
	if err != nil {
		return err
	}
	if err := rt.Start(ctx); err != nil {
		return badConfig(err)
	}
	defer rt.Stop(context.WithoutCancel(ctx))
	totals := map[string]*sweepTotals{}
	for _, name := range names {
		totals[name] = &sweepTotals{}
	}
	pending := len(names)
	for pending > 0 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case e := <-events:
			t := totals[e.PassName()]
			switch e := e.(type) {
			case actors.BatchDone:
				show.batch(e)
			case actors.PassFailed:
				t.failed = e.Err
			case actors.SweepDone:
				t.rows, t.skipped, t.batches, t.sweeps = t.rows+e.Rows, t.skipped+e.Skipped, t.batches+e.Batches, t.sweeps+1
				t.duration += e.Duration
				t.reason = e.Reason
				if drain && e.WorkRemains {
					if err := rt.Trigger(e.Name); err != nil {
						return err
					}
					continue
				}
				show.passDone(e.Name)
				pending--
			}
		}
	}
	show.wait()
	return printSummary(o, names, totals)
}

func printSummary(o *options, names []string, totals map[string]*sweepTotals) error {
	w := tabwriter.NewWriter(o.stdout, 0, 2, 2, ' ', 0)
	fmt.Fprintln(w, "PASS\tDELETED\tSKIPPED\tBATCHES\tSWEEPS\tDURATION\tSTOP REASON")
	var failed []string
	for _, name := range names {
		t := totals[name]
		fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%d\t%v\t%s\n", name, t.rows, t.skipped, t.batches, t.sweeps, t.duration.Round(time.Millisecond), t.reason)
		if t.failed != nil {
			failed = append(failed, name+": "+t.failed.Error())
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if len(failed) > 0 {
		return fmt.Errorf("%d passes failed: %v", len(failed), failed)
	}
	return nil
}
