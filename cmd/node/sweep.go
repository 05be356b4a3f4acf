package main

import (
	"context"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/retentionkit/retention/actors"
	rnode "github.com/retentionkit/retention/node"
)

func sweepCommand(o *options) *cobra.Command {
	var only []string
	var drain, dry, noLedger bool
	var retry time.Duration
	var progressMode string
	cmd := &cobra.Command{
		Use:   "sweep",
		Short: "Sweep the passes once, now",
		Example: `  retention sweep --config retention.yaml
  retention sweep --config retention.yaml --pass audit-log --drain
  retention sweep --config retention.yaml --dry-run
  retention sweep --config retention.yaml --drain --no-ledger`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkSweepFlags(progressMode, retry); err != nil {
				return err
			}
			if dry {
				return o.dryRun(cmd.Context(), rnode.DryRunOptions{Only: only, NoLedger: noLedger})
			}
			return o.sweep(cmd.Context(), rnode.SweepOptions{Only: only, Drain: drain, DrainRetry: retry, NoLedger: noLedger}, progressMode)
		},
	}
	cmd.Flags().StringArrayVar(&only, "pass", nil, "sweep only this pass (repeatable)")
	cmd.Flags().BoolVar(&drain, "drain", false, "repeat sweeps until no expired row is left; exit 1 if some are")
	cmd.Flags().DurationVar(&retry, "drain-retry", rnode.DefaultDrainRetry,
		"with --drain, how long to keep sweeping again, with a backoff, for rows a sweep could not reach (locked by other transactions, batches that timed out)")
	cmd.Flags().BoolVar(&dry, "dry-run", false, "count what would be deleted; delete nothing")
	cmd.Flags().StringVar(&progressMode, "progress", "auto", "progress bars: auto (on a terminal), always or never")
	cmd.Flags().BoolVar(&noLedger, "no-ledger", false,
		"a one-off sweep that neither creates nor writes the ledger's tables (no runs recorded, no quarantine: a row that cannot be deleted is skipped)")
	return cmd
}

// checkSweepFlags refuses flag values sweep cannot use, before anything is opened, so a
// bad one is refused the same with --dry-run as without.
func checkSweepFlags(progressMode string, retry time.Duration) error {
	switch progressMode {
	case "auto", "always", "never":
	default:
		return usageError{fmt.Errorf("--progress %q: want auto, always or never", progressMode)}
	}
	if retry < 0 {
		return usageError{fmt.Errorf("--drain-retry %v: must not be negative", retry)}
	}
	return nil
}

// dryRun prints the library's dry run (node.DryRun), a line per table pass.
func (o *options) dryRun(ctx context.Context, opts rnode.DryRunOptions) error {
	cfg, err := o.loadConfig()
	if err != nil {
		return err
	}
	opts.Logger = o.logger()
	est, err := rnode.DryRun(ctx, cfg, opts)
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(o.stdout, 0, 2, 2, ' ', 0)
	// WOULD DELETE, HELD and QUARANTINED are passes.Backlog, as status, /metrics and the
	// dashboard show them (docs/metrics.md): a quarantined row is not one a sweep deletes.
	fmt.Fprintln(w, "PASS\tWOULD DELETE\tHELD\tQUARANTINED\tCUTOFF")
	for _, e := range est {
		fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%s\n", e.Name, e.Deletable, e.Held, e.Quarantined, e.Cutoff.UTC().Format(time.RFC3339))
	}
	return w.Flush()
}

// sweep runs the library's one-off sweep (node.Sweep), printing a line or a bar per
// batch and a summary. It fails when a pass failed, when a batch timed out, and, with
// --drain, when expired rows are left at the end.
func (o *options) sweep(ctx context.Context, opts rnode.SweepOptions, progressMode string) error {
	cfg, err := o.loadConfig()
	if err != nil {
		return err
	}
	log := o.logger()
	opts.Logger = log
	var show progress = lines{o.stdout}
	opts.BeforeSweep = func(ctx context.Context, ps []rnode.Pass) {
		show = newProgress(ctx, o.stdout, progressMode, log, ps)
	}
	opts.Batch = func(e actors.BatchDone) { show.batch(e) }
	opts.PassDone = func(name string) { show.passDone(name) }
	defer func() { show.stop() }() // on an early return: the bars end, the log gets its output back
	res, err := rnode.Sweep(ctx, cfg, opts)
	if err != nil {
		return err
	}
	show.wait()
	return printSummary(o, res)
}

func printSummary(o *options, res rnode.SweepResult) error {
	w := tabwriter.NewWriter(o.stdout, 0, 2, 2, ' ', 0)
	fmt.Fprintln(w, "PASS\tDELETED\tSKIPPED\tBATCHES\tSWEEPS\tDURATION\tSTOP REASON")
	for _, t := range res.Passes {
		fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%d\t%v\t%s\n", t.Name, t.Rows, t.Skipped, t.Batches, t.Sweeps, t.Duration.Round(time.Millisecond), t.Reason)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return res.Err()
}
