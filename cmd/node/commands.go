package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/spf13/cobra"

	rnode "github.com/retentionkit/retention/node"
	"github.com/retentionkit/retention/node/config"
	"github.com/retentionkit/retention/node/live"
	"github.com/retentionkit/retention/passes/ledger"
)

func validateCommand(o *options) *cobra.Command {
	return &cobra.Command{
		Use:     "validate",
		Short:   "Check the configuration and the database without deleting anything",
		Example: "  retention validate --config retention.yaml",
		Args:    exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.existing = true // validate never creates a database
			return o.withNode(cmd.Context(), func(n *node) error {
				if err := n.startupValidate(cmd.Context()); err != nil {
					return err
				}
				fmt.Fprintf(o.stdout, "ok: %s\n", counted(len(n.passes), "pass", "passes"))
				return nil
			})
		},
	}
}

func migrateCommand(o *options) *cobra.Command {
	return &cobra.Command{
		Use:     "migrate",
		Short:   "Create or upgrade the ledger tables",
		Example: "  retention migrate --config retention.yaml",
		Args:    exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.withLedger(cmd.Context(), "migrate", func(n *node) error {
				applied, err := ledger.Migrate(cmd.Context(), n.tables.DB, n.cfg.LedgerPrefix())
				if err != nil {
					return err
				}
				fmt.Fprintf(o.stdout, "applied %s %v\n", counted(len(applied), "migration", "migrations"), applied)
				return nil
			})
		},
	}
}

// withNode opens the node, runs f, and closes it.
func (o *options) withNode(ctx context.Context, f func(n *node) error) error {
	n, err := o.open(ctx)
	if err != nil {
		return err
	}
	defer n.close()
	return f(n)
}

// withLedger is withNode for a command that needs the ledger; it says so when the ledger
// is disabled.
func (o *options) withLedger(ctx context.Context, what string, f func(n *node) error) error {
	return o.withNode(ctx, func(n *node) error {
		if n.ledger == nil {
			return badConfig(fmt.Errorf("%s needs the ledger (ledger.enabled is false)", what))
		}
		return f(n)
	})
}

func triggerCommand(o *options) *cobra.Command {
	return &cobra.Command{
		Use:     "trigger NAME",
		Short:   "Queue a sweep of a pass now; whichever node runs it picks it up",
		Example: "  retention trigger --config retention.yaml audit-log",
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.withLedger(cmd.Context(), "trigger", func(n *node) error {
				if !n.hasPass(args[0]) {
					return badConfig(fmt.Errorf("trigger: no pass %q in the configuration (passes: %s)", args[0], strings.Join(n.passNames(), ", ")))
				}
				c, err := n.ledger.RequestSweep(cmd.Context(), args[0], time.Now())
				if err != nil {
					return err
				}
				fmt.Fprintf(o.stdout, "queued a sweep of %s (run %d)\n", args[0], c.RunID)
				n.warnIfNoLiveNode(cmd.Context(), args[0], c.RunID)
				return nil
			})
		},
	}
}

// warnIfNoLiveNode warns that the sweep just queued waits: no node is alive to claim it.
// It only warns; the sweep stays queued either way.
func (n *node) warnIfNoLiveNode(ctx context.Context, pass string, run int64) {
	live, gone, err := liveNodes(ctx, n.ledger, time.Now())
	if err != nil || len(live) > 0 {
		return
	}
	n.log.WithFields(logrus.Fields{"pass": pass, "run": run}).Warn("no live node will claim the queued sweep yet: " + noLiveNode(gone))
}

func (n *node) hasPass(name string) bool {
	return slices.ContainsFunc(n.passes, func(p rnode.Pass) bool { return p.Name() == name })
}

func retryCommand(o *options) *cobra.Command {
	return &cobra.Command{
		Use:     "retry DEAD_LETTER_ID",
		Short:   "Retry a pass supervision gave up on; a running node revives and sweeps it",
		Example: "  retention retry --config retention.yaml 17",
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := strconv.ParseInt(args[0], 10, 64)
			if err != nil {
				return usageError{fmt.Errorf("DEAD_LETTER_ID %q is not a number", args[0])}
			}
			return o.withLedger(cmd.Context(), "retry", func(n *node) error {
				c, err := n.ledger.RetryDeadLetter(cmd.Context(), id, time.Now())
				if err != nil {
					return err
				}
				fmt.Fprintf(o.stdout, "queued a retry of %s (run %d)\n", c.Pass, c.RunID)
				return nil
			})
		},
	}
}

func settingsCommand(o *options) *cobra.Command {
	settings := asGroup(&cobra.Command{
		Use:   "settings",
		Short: "Change runtime settings every node reads from the ledger",
		Example: "  retention settings set --config retention.yaml pass.audit-log.batch_size 200\n" +
			"  retention settings unset --config retention.yaml pass.audit-log.batch_size",
	})
	set := &cobra.Command{
		Use:   "set KEY VALUE",
		Short: "Set a runtime setting (metadata_cleanup.retention_period, pass.NAME.batch_size|batch_delay|sweep_interval|pacing)",
		Example: "  retention settings set --config retention.yaml metadata_cleanup.retention_period 2h\n" +
			"  retention settings set --config retention.yaml pass.audit-log.batch_size 200",
		RunE: func(cmd *cobra.Command, args []string) error {
			if strings.HasPrefix(args[0], ledger.PassSettingPrefix) {
				return o.setPassSetting(cmd.Context(), args[0], args[1])
			}
			if args[0] != ledger.SettingCleanupRetention {
				return usageError{fmt.Errorf("settings: unknown key %q (known: %s, or pass.NAME.FIELD with FIELD one of %s)", args[0], ledger.SettingCleanupRetention, strings.Join(live.Fields, ", "))}
			}
			d, err := config.ParseDuration(args[1])
			if err != nil || d <= 0 {
				return usageError{fmt.Errorf("settings: %s must be a positive duration, got %q", args[0], args[1])}
			}
			return o.withLedger(cmd.Context(), "settings", func(n *node) error {
				if err := n.ledger.SetCleanupRetention(cmd.Context(), d, time.Now()); err != nil {
					return err
				}
				fmt.Fprintf(o.stdout, "%s = %v\n", args[0], d)
				return nil
			})
		},
	}
	valuesMayBeNegative(set, exactArgs(2)) // a value such as -1 reaches its check
	settings.AddCommand(set, settingsUnsetCommand(o))
	return settings
}

func statusCommand(o *options) *cobra.Command {
	return &cobra.Command{
		Use:     "status",
		Short:   "Show each pass's last runs and backlog, which nodes are alive and, in cluster mode, who owns and who sweeps each pass",
		Example: "  retention status --config retention.yaml",
		Args:    exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.withNode(cmd.Context(), func(n *node) error {
				if err := n.printStatus(cmd.Context(), tabwriter.NewWriter(o.stdout, 0, 2, 2, ' ', 0)); err != nil {
					return err
				}
				fmt.Fprintln(o.stdout)
				if err := n.printLive(cmd.Context(), o.stdout); err != nil {
					return err
				}
				fmt.Fprintln(o.stdout)
				if err := n.printNodes(cmd.Context(), o.stdout); err != nil {
					return err
				}
				if err := n.printHealth(cmd.Context(), o.stdout); err != nil {
					return err
				}
				return n.printCluster(cmd.Context(), o.stdout)
			})
		},
	}
}

func (n *node) printStatus(ctx context.Context, w *tabwriter.Writer) error {
	// BACKLOG, HELD and QUARANTINED are passes.Backlog, as /metrics and the dashboard
	// show them (docs/metrics.md).
	fmt.Fprintln(w, "PASS\tBACKLOG\tHELD\tQUARANTINED\tLAST RUN\tSTATE\tROWS\tSKIPPED (STILL THERE)\tREASON\tFAILED RUNS (LAST 50)\tNEXT SWEEP (ABOUT)")
	for i, p := range n.passes {
		opts := p.Options()
		backlog, held, quarantined := "-", "-", "-"
		if opts.Enabled() && p.IsTable() {
			if b, err := n.backlog(ctx, i, opts.Cutoff(time.Now())); err == nil {
				backlog, held, quarantined = strconv.FormatInt(b.Deletable, 10), strconv.FormatInt(b.Held, 10), strconv.FormatInt(b.Quarantined, 10)
			}
		}
		last, state, rows, skipped, reason, failed, next := "-", "-", "-", "-", "-", "-", "-"
		if n.ledger != nil {
			if runs, err := n.ledger.Runs(ctx, p.Name(), 50); err == nil && len(runs) > 0 {
				r := runs[0]
				last, state = stamp(r.StartTime), string(r.State)
				rows, skipped = strconv.FormatInt(r.RowsDeleted, 10), strconv.FormatInt(r.RowsSkipped, 10)
				if r.StopReason != nil {
					reason = *r.StopReason
				}
				count := 0
				for _, run := range runs {
					if run.State == ledger.Failed {
						count++
					}
				}
				failed = strconv.Itoa(count)
				if r.EndTime != nil && opts.Enabled() {
					next = stamp(r.EndTime.Add(opts.EffectiveInterval()))
				}
			}
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", p.Name(), backlog, held, quarantined, last, state, rows, skipped, reason, failed, next)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if err := n.printPacing(w); err != nil {
		return err
	}
	if err := n.printPartitions(ctx, w); err != nil {
		return err
	}
	return n.printRetirements(ctx, w)
}
