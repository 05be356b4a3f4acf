package node

import (
	"context"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/node/live"
)

// startPolling starts what a node with a ledger reads from it while it runs: the
// operators' live settings (node/live), applied once before any pass's first sweep is
// due (the startup stagger) and then every few seconds, and the work-queue poller that
// claims queued sweeps and retries (in cluster mode, only what this member owns). The
// returned stop ends both and waits for a poll in flight to close its run (it bounds its
// own writes), so the process never exits with the poll's run InProgress. Without a
// ledger there is nothing to read and stop does nothing.
func (n *Node) startPolling(ctx context.Context) (stop func()) {
	if n.ledger == nil {
		return func() {}
	}
	pollCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	settings := &live.Poller{Settings: n.ledger, Runtime: n.rt, Logger: n.log}
	if err := settings.Poll(pollCtx); err != nil {
		n.log.WithError(err).Warn("live settings: first read failed; the file's values hold until a read succeeds")
	}
	settings.Start(pollCtx)
	polled := make(chan struct{})
	go func() {
		defer close(polled)
		n.workQueuePoller().Run(pollCtx)
	}()
	return func() {
		cancel()
		<-polled
		settings.Stop()
	}
}

// workQueuePoller is the work-queue poller; in cluster mode it claims only what this
// member owns and activates a placed pass (a drain helper) for its request.
func (n *Node) workQueuePoller() *actors.WorkQueuePoller {
	p := &actors.WorkQueuePoller{Runtime: n.rt, Ledger: n.ledger, Logger: n.log}
	if n.cluster != nil {
		p.Claimable, p.Trigger = n.cluster.member.Owned, n.cluster.member.TriggerClaimed
	}
	return p
}
