package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/retentionkit/retention/node/live"
	"github.com/retentionkit/retention/passes/ledger"
)

// The live-control commands: a pass's pace (settings set/unset pass.NAME.FIELD) and
// pause/resume, stored in the ledger for every node sharing it (node/live).

func (n *node) passNames() []string {
	names := make([]string, 0, len(n.passes))
	for _, r := range n.registrations() {
		names = append(names, r.Name)
	}
	return names
}

// setPassSetting stores pass.NAME.FIELD = value after checking both against the
// configuration; a bad key or value is a usage error (exit 2) naming the key.
func (o *options) setPassSetting(ctx context.Context, key, value string) error {
	return o.withLedger(ctx, "settings", func(n *node) error {
		k, err := live.ParseKey(key, n.passNames(), false)
		if err != nil {
			return usageError{fmt.Errorf("settings: %w", err)}
		}
		v, err := live.Parse(k, value)
		if err != nil {
			return usageError{fmt.Errorf("settings: %w", err)}
		}
		if err := n.ledger.SetSetting(ctx, k.String(), v, time.Now()); err != nil {
			return err
		}
		fmt.Fprintf(o.stdout, "%s = %s (running nodes apply it within %v)\n", k, v, live.DefaultPollInterval)
		return nil
	})
}

func settingsUnsetCommand(o *options) *cobra.Command {
	return &cobra.Command{
		Use:     "unset KEY",
		Short:   "Remove a runtime setting, so the configuration file's value holds again",
		Example: "  retention settings unset --config retention.yaml pass.audit-log.batch_size",
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.withLedger(cmd.Context(), "settings", func(n *node) error {
				key := args[0]
				if key != ledger.SettingCleanupRetention {
					k, err := live.ParseKey(key, n.passNames(), false)
					if err != nil {
						return usageError{fmt.Errorf("settings: %w", err)}
					}
					key = k.String()
				}
				removed, err := n.ledger.UnsetSetting(cmd.Context(), key)
				if err != nil {
					return err
				}
				if !removed {
					fmt.Fprintf(o.stdout, "%s was not set; the configuration file's value holds\n", key)
					return nil
				}
				fmt.Fprintf(o.stdout, "%s unset; the configuration file's value holds again\n", key)
				return nil
			})
		},
	}
}

func pauseCommand(o *options) *cobra.Command {
	return &cobra.Command{
		Use:     "pause NAME",
		Short:   "Hold a pass on every node: the batch in flight finishes, nothing more starts until resume",
		Example: "  retention pause --config retention.yaml audit-log",
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.setPaused(cmd.Context(), args[0], true)
		},
	}
}

func resumeCommand(o *options) *cobra.Command {
	return &cobra.Command{
		Use:     "resume NAME",
		Short:   "Let a paused pass go on where it stopped, on every node",
		Example: "  retention resume --config retention.yaml audit-log",
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.setPaused(cmd.Context(), args[0], false)
		},
	}
}

func (o *options) setPaused(ctx context.Context, name string, paused bool) error {
	what := map[bool]string{true: "pause", false: "resume"}[paused]
	return o.withLedger(ctx, what, func(n *node) error {
		if !n.hasPass(name) {
			return usageError{fmt.Errorf("%s: no pass %q in the configuration (passes: %s)", what, name, strings.Join(n.passNames(), ", "))}
		}
		key := ledger.PassSettingKey(name, live.FieldPaused)
		var err error
		if paused {
			err = n.ledger.SetSetting(ctx, key, "true", time.Now())
		} else {
			_, err = n.ledger.UnsetSetting(ctx, key)
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(o.stdout, "%sd %s (running nodes apply it within %v)\n", what, name, live.DefaultPollInterval)
		return nil
	})
}

// printLive shows each pass's pace as the running nodes apply it: a live setting from
// the ledger, marked "(live)", or else the configuration file's value.
func (n *node) printLive(ctx context.Context, w io.Writer) error {
	if n.ledger == nil {
		return nil
	}
	stored, err := n.ledger.Settings(ctx, ledger.PassSettingPrefix)
	if err != nil {
		return err
	}
	overrides, problems := live.Overrides(stored, n.passNames())
	fmt.Fprintf(w, "LIVE SETTINGS (from the ledger; running nodes apply them within %v)\n", live.DefaultPollInterval)
	tw := tabwriter.NewWriter(w, 0, 2, 2, ' ', 0)
	// Indented, so a script looking for the pass table's line of a pass finds that one.
	fmt.Fprintln(tw, "  PASS\tPAUSED\tBATCH SIZE\tBATCH DELAY\tSWEEP INTERVAL\tPACING")
	for _, r := range n.registrations() {
		ov := overrides[r.Name]
		size, delay, interval, pacing := strconv.Itoa(r.Options.BatchSize), r.Options.BatchDelay.String(), r.Options.SweepInterval.String(), "file"
		if ov.BatchSize != nil {
			size = strconv.Itoa(*ov.BatchSize) + " (live)"
		}
		if ov.BatchDelay != nil {
			delay = ov.BatchDelay.String() + " (live)"
		}
		if ov.SweepInterval != nil {
			interval = ov.SweepInterval.String() + " (live)"
		}
		if ov.Pacing != "" {
			pacing = ov.Pacing + " (live)"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\n", r.Name, map[bool]string{true: "yes", false: "no"}[ov.Paused], size, delay, interval, pacing)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, p := range problems {
		fmt.Fprintln(w, p)
	}
	return nil
}
