// Command retention is the node binary: it runs the passes a configuration file
// declares, sweeps them on demand, and manages the run ledger. See docs/node.md.
//
// Exit codes: 0 success, 1 a pass failed at run time, 2 bad configuration or usage, 3
// fenced: a cluster member that dropped out of the topology stopped so its process
// manager restarts it as a new member.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/sirupsen/logrus"
	"github.com/spf13/cobra"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/node/cluster"
	"github.com/retentionkit/retention/node/config"
)

func main() {
	os.Exit(execute(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// execute runs the command line and returns the exit code.
func execute(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := newRootCommand(stdout, stderr)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	fmt.Fprintln(stderr, "retention:", err)
	var ce *configError
	if errors.As(err, &ce) || isUsageError(err) {
		return 2
	}
	if isFenced(err) {
		return cluster.ExitFenced
	}
	return 1
}

// usageError is a command line that does not parse.
type usageError struct{ error }

func isUsageError(err error) bool {
	var u usageError
	return errors.As(err, &u)
}

type options struct {
	config    string
	logFormat string
	existing  bool // open the database only if it exists, changing nothing (validate)
	stdout    io.Writer
	stderr    io.Writer
}

// logFormats are the values --log-format takes.
var logFormats = []string{"text", "json"}

// checkLogFormat refuses a --log-format it does not know, before anything runs.
func (o *options) checkLogFormat() error {
	if !slices.Contains(logFormats, o.logFormat) {
		return usageError{fmt.Errorf("--log-format: want %s, got %q", strings.Join(logFormats, " or "), o.logFormat)}
	}
	return nil
}

func (o *options) logger() *logrus.Logger {
	l := logrus.New()
	l.SetOutput(o.stderr)
	if o.logFormat == "json" {
		l.SetFormatter(actors.SecondsFormatter{Formatter: &logrus.JSONFormatter{}}) // durations in seconds
	}
	return l
}

// loadConfig is the --config file loaded and validated, for a command that hands it to
// the library (sweep).
func (o *options) loadConfig() (*config.Config, error) {
	if o.config == "" {
		return nil, usageError{errors.New("--config FILE is required")}
	}
	return loadConfig(o.config)
}

func (o *options) open(ctx context.Context) (*node, error) {
	if o.config == "" {
		return nil, usageError{errors.New("--config FILE is required")}
	}
	return openNode(ctx, o.config, o.logger(), o.existing)
}

func newRootCommand(stdout, stderr io.Writer) *cobra.Command {
	o := &options{stdout: stdout, stderr: stderr}
	root := asGroup(&cobra.Command{
		Use:           "retention",
		Short:         "Delete expired rows on a schedule, in bounded, paced batches",
		Example:       "  retention validate --config retention.yaml\n  retention run --config retention.yaml",
		SilenceUsage:  true,
		SilenceErrors: true,
	})
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.PersistentPreRunE = func(*cobra.Command, []string) error { return o.checkLogFormat() }
	root.PersistentFlags().StringVar(&o.config, "config", "", "the configuration file (YAML)")
	root.PersistentFlags().StringVar(&o.logFormat, "log-format", "text", "log format: text or json")
	root.AddCommand(
		runCommand(o), sweepCommand(o), validateCommand(o), migrateCommand(o),
		statusCommand(o), triggerCommand(o), retryCommand(o), settingsCommand(o), quarantineCommand(o),
		pauseCommand(o), resumeCommand(o),
	)
	addVersion(root)
	addBuiltins(root)
	return root
}

func exactArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := cobra.ExactArgs(n)(cmd, args); err != nil {
			return usageError{err}
		}
		return nil
	}
}
