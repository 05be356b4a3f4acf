package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/spf13/cobra"

	"github.com/retentionkit/retention/actors"
	rnode "github.com/retentionkit/retention/node"
	"github.com/retentionkit/retention/passes"
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
			o.noLedger = noLedger
			return o.withNode(cmd.Context(), func(n *node) error {
				for _, name := range only {
					if !n.hasPass(name) {
						return badConfig(fmt.Errorf("--pass %q: no such pass in the configuration (passes: %s)", name, strings.Join(n.passNames(), ", ")))
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
				if err := n.lockForSweep(cmd.Context()); err != nil {
					return err
				}
				return n.sweep(cmd.Context(), only, drain, retry, progressMode, o)
			})
		},
	}
	cmd.Flags().StringArrayVar(&only, "pass", nil, "sweep only this pass (repeatable)")
	cmd.Flags().BoolVar(&drain, "drain", false, "repeat sweeps until no expired row is left; exit 1 if some are")
	cmd.Flags().DurationVar(&retry, "drain-retry", defaultDrainRetry,
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

func (n *node) selected(only []string) []int {
	var idx []int
	for i, p := range n.passes {
		if (len(only) == 0 || slices.Contains(only, p.Name())) && p.Options().Enabled() {
			idx = append(idx, i)
		}
	}
	return idx
}

func (n *node) dryRun(ctx context.Context, only []string, o *options) error {
	w := tabwriter.NewWriter(o.stdout, 0, 2, 2, ' ', 0)
	// WOULD DELETE, HELD and QUARANTINED are passes.Backlog, as status, /metrics and the
	// dashboard show them (docs/metrics.md): a quarantined row is not one a sweep deletes.
	fmt.Fprintln(w, "PASS\tWOULD DELETE\tHELD\tQUARANTINED\tCUTOFF")
	for _, i := range n.selected(only) {
		if !n.passes[i].IsTable() {
			continue // nothing to count
		}
		cutoff := n.passes[i].Options().Cutoff(time.Now())
		b, err := n.backlog(ctx, i, cutoff)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%s\n", n.passes[i].Name(), b.Deletable, b.Held, b.Quarantined, cutoff.UTC().Format(time.RFC3339))
	}
	return w.Flush()
}

// sweepTotals adds up one pass's sweeps.
type sweepTotals struct {
	rows, skipped, batches, sweeps int
	duration                       time.Duration
	reason                         actors.StopReason
	failed                         error // the pass's last failure
	left                           error // why the pass is not done: rows left, a batch timed out
	done                           bool  // no more sweeps of it are waited for
}

func (t *sweepTotals) add(e actors.SweepDone) {
	t.rows, t.skipped, t.batches, t.sweeps = t.rows+e.Rows, t.skipped+e.Skipped, t.batches+e.Batches, t.sweeps+1
	t.duration += e.Duration
	t.reason = e.Reason
}

// sweep runs one sweep of every selected pass on a runtime (with --drain, more while
// the last one reports work remaining, or rows it could not reach, within retry),
// printing a line per batch and a summary. It fails when a pass failed, when a batch
// timed out, and, with --drain, when expired rows are left at the end.
func (n *node) sweep(ctx context.Context, only []string, drain bool, retry time.Duration, progressMode string, o *options) error {
	idx := n.selected(only)
	var names []string
	for _, i := range idx {
		names = append(names, n.passes[i].Name())
	}
	events := make(chan actors.Event, 1024)
	show := n.newProgress(ctx, o.stdout, progressMode, idx)
	defer show.stop() // on an early return: the bars end, the log gets its output back
	if err := n.join(ctx); err != nil {
		return err
	}
	if drain {
		drainUnbounded(n.passes)
	}
	rt, err := n.runtime(names, actors.ObserverFunc(func(e actors.Event) error {
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
	drains := newDrainer(retry, n.countExpired)
	if n.ledger != nil {
		drains.kept = func(ctx context.Context, pass string) (int, error) {
			rows, err := n.ledger.QuarantinedRows(ctx, pass)
			return len(rows), err
		}
	}
	retries := make(chan string, len(names))
	pending := len(names)
	finish := func(name string, left error) {
		t := totals[name]
		t.done, t.left = true, left
		show.passDone(name)
		pending--
	}
	for pending > 0 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case name := <-retries:
			if err := rt.Trigger(name); err != nil {
				finish(name, err)
			}
		case e := <-events:
			t := totals[e.PassName()]
			if t == nil || t.done {
				continue // a pass restarted after its failure sweeps again: its result is in
			}
			switch e := e.(type) {
			case actors.BatchDone:
				show.batch(e)
			case actors.PassFailed:
				t.failed = e.Err
			case actors.SweepDone:
				t.add(e)
				if !drain {
					finish(e.Name, timedOut(e))
					continue
				}
				v := drains.after(ctx, e)
				if v.kept > 0 {
					n.log.WithFields(logrus.Fields{"pass": e.Name, "left": v.kept}).
						Warn("expired rows left that the pass could not delete (skipped or in quarantine: see `retention quarantine list`)")
				}
				if !v.again {
					finish(e.Name, v.err)
					continue
				}
				if v.wait > 0 {
					n.log.WithFields(logrus.Fields{"pass": e.Name, "left": drains.states[e.Name].left, "retry_in": v.wait}).
						Info("expired rows left after the sweep; sweeping again")
				}
				name := e.Name
				time.AfterFunc(v.wait, func() { retries <- name })
			}
		}
	}
	show.wait()
	return printSummary(o, names, totals)
}

// lockForSweep is cluster mode's part of a one-off `sweep`: the command joins no
// cluster, but its sweeps take the same locks as the members' (node.LockTables), so a
// manual sweep never runs beside a member's sweep of the same pass (it ends "elsewhere"
// instead). Its connections are named retention:sweep-<pid>.
func (n *node) lockForSweep(ctx context.Context) error {
	if !n.cfg.Cluster.Enabled {
		return nil
	}
	if err := rnode.CheckClusterDatabase(ctx, n.db, n.cfg); err != nil {
		return err
	}
	return rnode.LockTables(n.passes, passes.SweepConnOptions{ApplicationName: passes.MemberAppPrefix + "sweep-" + strconv.Itoa(os.Getpid())})
}

// timedOut is the error of a single sweep whose batch timed out.
func timedOut(e actors.SweepDone) error {
	if e.Reason != actors.Cancelled {
		return nil
	}
	return fmt.Errorf("%s: a batch timed out (see batch_timeout) after %s deleted", e.Name, counted(e.Rows, "row was", "rows were"))
}

// countTimeout bounds the count that ends a drain, so a table another session holds
// locked fails the drain instead of hanging it.
const countTimeout = 30 * time.Second

// countExpired is the dry-run count of the named pass at cutoff.
func (n *node) countExpired(ctx context.Context, pass string, cutoff time.Time) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, countTimeout)
	defer cancel()
	for _, p := range n.passes {
		if p.Name() == pass && !p.IsTable() {
			return 0, fmt.Errorf("pass %s: %w", pass, errNoBacklog)
		}
		if p.Name() == pass {
			res, err := p.Table.DryRun(ctx, cutoff)
			return int(res.Eligible), err
		}
	}
	return 0, fmt.Errorf("no pass %q", pass)
}

func printSummary(o *options, names []string, totals map[string]*sweepTotals) error {
	w := tabwriter.NewWriter(o.stdout, 0, 2, 2, ' ', 0)
	fmt.Fprintln(w, "PASS\tDELETED\tSKIPPED\tBATCHES\tSWEEPS\tDURATION\tSTOP REASON")
	var failed, left []string
	for _, name := range names {
		t := totals[name]
		fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%d\t%v\t%s\n", name, t.rows, t.skipped, t.batches, t.sweeps, t.duration.Round(time.Millisecond), t.reason)
		if t.reason == actors.Failed && t.failed != nil {
			failed = append(failed, namedOnce(name, t.failed))
		}
		if t.left != nil {
			left = append(left, t.left.Error())
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	var errs []error
	if len(failed) > 0 {
		errs = append(errs, fmt.Errorf("%s failed: %s", counted(len(failed), "pass", "passes"), strings.Join(failed, "; ")))
	}
	if len(left) > 0 {
		errs = append(errs, fmt.Errorf("not done: %s", strings.Join(left, "; ")))
	}
	return errors.Join(errs...)
}

// namedOnce is err's text starting with the pass's name once: a table pass's errors
// name their pass already.
func namedOnce(name string, err error) string {
	msg := err.Error()
	if strings.HasPrefix(msg, fmt.Sprintf("pass %q", name)) {
		return msg
	}
	return name + ": " + msg
}
