package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/node/admin"
	"github.com/retentionkit/retention/node/cluster"
	"github.com/retentionkit/retention/node/live"
	"github.com/retentionkit/retention/node/metrics"
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

func (o *options) run(ctx context.Context) error {
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(signals)

	n, err := o.open(ctx)
	if err != nil {
		return err
	}
	var undo closers // every error path below returns with this, and nothing else, undone
	defer undo.close()
	undo.push(n.close)
	if err := n.startupValidate(ctx); err != nil {
		return err
	}
	if err := n.migrate(ctx); err != nil {
		return err
	}
	// A signal while the node waits for etcd stops it there: nothing runs yet.
	joinCtx, stopJoin := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	err = n.joinCluster(joinCtx)
	interrupted := joinCtx.Err() != nil && ctx.Err() == nil // read before stopJoin cancels it
	stopJoin()
	if err != nil {
		if interrupted {
			n.log.Info("stopped by a signal before joining the cluster")
			return nil
		}
		return err
	}
	// An error path leaves at once (not gracefully); a stop leaves gracefully unless
	// fenced, once the passes have stopped.
	graceful := false
	leave := sync.OnceFunc(func() { n.leaveCluster(graceful) })
	undo.push(leave)
	if err := n.join(ctx); err != nil {
		return err
	}
	m := metrics.NewObserver()
	// The backlog is also sampled at every sweep's end, so its chart fills with nobody
	// scraping /metrics.
	backlog := n.backlogCollector()
	sampling, stopSampling := context.WithCancel(ctx)
	defer stopSampling()
	rt, err := n.runtime(nil, true, false, m, backlog.SampleSweeps(sampling, 0, nil))
	if err != nil {
		return err
	}
	reg, err := n.registry(rt, m, backlog)
	if err != nil {
		return err
	}
	acfg := admin.Config{Runtime: rt, Ledger: n.ledger, Token: n.cfg.Node.AdminToken, Gatherer: reg, ReadyAfterFailures: n.cfg.ReadyAfterFailures()}
	if n.cluster != nil {
		acfg.Cluster, acfg.QueueTriggers = n.cluster.member, n.ledger != nil
	}
	// The dashboard is built from the finished admin config (in cluster mode, after
	// acfg.Cluster is set), so both show the same ClusterSource.
	if acfg.UI, err = n.dashboard(acfg, backlog); err != nil {
		return err
	}
	adm := admin.New(acfg)
	if n.cfg.Node.Admin != "" {
		srv, addr, err := serveAdmin(n.cfg.Node.Admin, adm)
		if err != nil {
			return badConfig(fmt.Errorf("node.admin: %w", err))
		}
		defer srv.Close()
		n.log.WithField("addr", addr).Info("admin endpoint listening")
	}
	if err := rt.Start(ctx); err != nil {
		return badConfig(err)
	}
	var fenced <-chan *cluster.FencedError
	if n.cluster != nil {
		n.cluster.member.Serve(ctx, rt)
		fenced = n.cluster.member.Fenced()
	}
	adm.SetReady(true)
	pollCtx, cancelPolling := context.WithCancel(ctx)
	defer cancelPolling()
	polled := make(chan struct{})
	var settings *live.Poller
	if n.ledger != nil {
		settings = n.liveSettings(pollCtx, rt)
		go func() {
			defer close(polled)
			n.poller(rt).Run(pollCtx)
		}()
	} else {
		close(polled)
	}
	// stopPolling waits for a poll in flight to close its run (it bounds its own writes),
	// so the process never exits with the poll's run InProgress.
	stopPolling := func() {
		cancelPolling()
		<-polled
		if settings != nil {
			settings.Stop()
		}
	}
	n.log.WithField("passes", len(rt.PassNames())).Info("node running")

	var fence *cluster.FencedError
	select {
	case sig := <-signals:
		n.log.WithField("signal", sig.String()).Info("stopping: in-flight batches finish within the grace period")
	case fence = <-fenced:
		n.log.WithError(fence).Error("fenced: stopping the passes, then exiting with code 3")
	}
	adm.SetReady(false)
	stopPolling()
	graceCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), n.cfg.ShutdownGrace())
	defer cancel()
	go func() { // a second signal cancels the in-flight batches at once
		select {
		case <-signals:
			cancel()
		case <-graceCtx.Done():
		}
	}()
	stopErr := rt.Stop(graceCtx)
	if stopErr != nil {
		n.log.WithError(stopErr).Warn("stopped after cancelling in-flight batches")
	}
	// Leaving after the passes stopped: the others take them at once (graceful), and
	// their first sweeps find the locks free. A fenced member's entry is gone already.
	graceful = fence == nil
	leave()
	if fence != nil {
		return &fencedExit{fence}
	}
	if rt.Status().Degraded {
		return errors.New("stopped with passes that supervision had given up on")
	}
	return nil
}

// liveSettings applies the operators' live settings stored in the ledger (node/live)
// once, before any pass's first sweep is due (the startup stagger), then every few
// seconds until the returned poller is stopped.
func (n *node) liveSettings(ctx context.Context, rt *actors.Runtime) *live.Poller {
	p := &live.Poller{Settings: n.ledger, Runtime: rt, Logger: n.log}
	if err := p.Poll(ctx); err != nil {
		n.log.WithError(err).Warn("live settings: first read failed; the file's values hold until a read succeeds")
	}
	p.Start(ctx)
	return p
}

// poller is the work-queue poller; in cluster mode it claims only what this member owns
// and activates a placed pass (a drain helper) for its request.
func (n *node) poller(rt *actors.Runtime) *actors.WorkQueuePoller {
	p := &actors.WorkQueuePoller{Runtime: rt, Ledger: n.ledger, Logger: n.log}
	if n.cluster != nil {
		p.Claimable, p.Trigger = n.cluster.member.Owned, n.cluster.member.TriggerClaimed
	}
	return p
}

// leaveCluster leaves the cluster, if the node joined one.
func (n *node) leaveCluster(graceful bool) {
	if n.cluster != nil {
		leave(n.cluster.member, graceful)
	}
}

// serveAdmin listens on addr and serves h there; it returns the server and the bound
// address (addr may ask for port 0).
func serveAdmin(addr string, h http.Handler) (*http.Server, string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, "", err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return srv, ln.Addr().String(), nil
}
