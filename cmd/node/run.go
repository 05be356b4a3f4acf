package main

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	rnode "github.com/retentionkit/retention/node"
	"github.com/retentionkit/retention/node/cluster"
	"github.com/retentionkit/retention/node/config"
)

func runCommand(o *options) *cobra.Command {
	return &cobra.Command{
		Use:     "run",
		Short:   "Run every pass until SIGINT or SIGTERM",
		Example: "  retention run --config retention.yaml",
		Args:    exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.run(cmd.Context())
		},
	}
}

// run is the node of the library (node.Open, Start, Stop, Close) under signals: it
// stops on SIGINT or SIGTERM, or when its cluster member fenced itself, and a second
// signal cancels the in-flight batches at once. main maps what it returns to the exit
// code.
func (o *options) run(ctx context.Context) error {
	if o.config == "" {
		return usageError{errors.New("--config FILE is required")}
	}
	cfg, err := config.LoadConfig(o.config)
	if err != nil {
		return badConfig(err)
	}
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(signals)

	log := o.logger()
	// A signal while the node opens (waiting for the database or etcd) stops it there:
	// nothing runs yet.
	openCtx, stopOpen := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	n, err := rnode.Open(openCtx, cfg, rnode.Options{Logger: log, ServeAdmin: true})
	interrupted := openCtx.Err() != nil && ctx.Err() == nil // read before stopOpen cancels it
	stopOpen()
	if err != nil {
		if interrupted {
			log.Info(map[bool]string{true: "stopped by a signal before joining the cluster", false: "stopped by a signal before the node started"}[cfg.Cluster.Enabled])
			return nil
		}
		return err
	}
	defer n.Close()
	if err := n.Start(ctx); err != nil {
		return err
	}

	select {
	case sig := <-signals:
		log.WithField("signal", sig.String()).Info("stopping: in-flight batches finish within the grace period")
	case fence := <-n.Fenced():
		log.WithError(fence).Error("fenced: stopping the passes, then exiting with code 3")
	}
	graceCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.ShutdownGrace())
	defer cancel()
	go func() { // a second signal cancels the in-flight batches at once
		select {
		case <-signals:
			cancel()
		case <-graceCtx.Done():
		}
	}()
	return n.Stop(graceCtx)
}

// isFenced reports whether err is a cluster member's fencing: exit cluster.ExitFenced.
func isFenced(err error) bool {
	var fe *cluster.FencedError
	return errors.As(err, &fe)
}
