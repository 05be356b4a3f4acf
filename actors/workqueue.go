package actors

import (
	"context"
	"fmt"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/retentionkit/retention/core/clock"
	"github.com/retentionkit/retention/core/polling"
	"github.com/retentionkit/retention/passes/ledger"
)

// WorkQueuePoller claims requested sweeps ("sweep now", dead-letter retries) from the
// ledger for its runtime's passes and triggers them. Every runtime sharing the database
// polls; each request is claimed by exactly one. A poll that claimed something, or
// failed, is recorded as a run under ledger.NameWorkQueuePoller (which the metadata
// cleanup prunes); one that found the queue empty writes nothing, since it runs every
// second and would otherwise fill the Runs page with polls that did nothing.
type WorkQueuePoller struct {
	Runtime *Runtime
	Ledger  *ledger.Ledger
	// Clock times the polls and stamps the runs; nil is the wall clock.
	Clock clock.Clock
	// Interval is the wait between polls; zero means a second.
	Interval time.Duration
	// Reporter hears of failed polls; nil hears nothing.
	Reporter polling.Reporter
	// Logger hears, at info, of a poll that claimed requests (one that found the queue
	// empty says nothing); nil logs nothing.
	Logger logrus.FieldLogger
	// Claimable names the passes whose requests this poller may claim; nil is every
	// registered pass. Cluster mode narrows it to the identities this member owns, so a
	// request is claimed by the member that runs its pass.
	Claimable func() []string
	// Trigger hands a claimed request to its pass; nil is Runtime.TriggerRun. Cluster
	// mode activates a placed pass that is not active yet (a drain helper) with the
	// request as its first sweep. An error fails the request's run with the reason.
	Trigger func(ctx context.Context, pass string, run int64) error
}

func (p *WorkQueuePoller) trigger(ctx context.Context, pass string, run int64) error {
	if p.Trigger != nil {
		return p.Trigger(ctx, pass, run)
	}
	return p.Runtime.TriggerRun(pass, run)
}

func (p *WorkQueuePoller) claimable() []string {
	if p.Claimable != nil {
		return p.Claimable()
	}
	return p.Runtime.PassNames()
}

// Run polls until stop ends.
func (p *WorkQueuePoller) Run(stop context.Context) {
	interval := p.Interval
	if interval <= 0 {
		interval = time.Second
	}
	polling.Loop{Interval: interval, Clock: p.Clock, Reporter: p.Reporter, Pass: func(ctx context.Context) (polling.Outcome, error) {
		_, err := p.PollOnce(ctx)
		return polling.WaitForInterval, err
	}}.Run(stop)
}

// PollOnce claims what is queued for the runtime's passes, triggers each, and returns how
// many it claimed. A dead-letter retry first revives its pass if supervision stopped it;
// a claim for a pass that cannot sweep fails its run with the reason.
func (p *WorkQueuePoller) PollOnce(ctx context.Context) (int, error) {
	clk := clock.OrReal(p.Clock)
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	// The poll's run is written on a context a stop does not cancel (bounded instead): a
	// stop landing between two statements, or while the insert that opens the run is on
	// the wire, must not leave the run InProgress. It is written only once the claim
	// says there is something to record.
	closing, cancel := context.WithTimeout(context.WithoutCancel(ctx), ledgerCloseTimeout)
	defer cancel()
	start := clk.Now()
	claims, err := p.Ledger.ClaimWork(ctx, p.claimable(), 100, start)
	if err != nil {
		state := ledger.Failed
		if ctx.Err() != nil {
			state = ledger.Cancelled
		}
		if run, serr := p.Ledger.StartRun(closing, ledger.NameWorkQueuePoller, start, start, nil); serr == nil {
			_ = p.Ledger.FinishRun(closing, run, ledger.Finish{End: clk.Now(), State: state, Error: err.Error()})
		}
		return 0, err
	}
	if len(claims) == 0 {
		return 0, nil
	}
	for _, c := range claims {
		if c.Retry {
			if _, degraded := p.Runtime.degraded(c.Pass); degraded {
				if err := p.Runtime.Revive(ctx, c.Pass); err != nil {
					_ = p.Ledger.FinishRun(closing, c.RunID, ledger.Finish{End: clk.Now(), State: ledger.Failed, Error: fmt.Sprintf("not revived: %v", err)})
					_ = p.Ledger.FinishWork(closing, []int64{c.RunID})
					continue
				}
			}
		}
		if terr := p.trigger(ctx, c.Pass, c.RunID); terr != nil {
			_ = p.Ledger.FinishRun(closing, c.RunID, ledger.Finish{End: clk.Now(), State: ledger.Failed, Error: fmt.Sprintf("not triggered: %v", terr)})
			_ = p.Ledger.FinishWork(closing, []int64{c.RunID})
		}
	}
	if p.Logger != nil {
		p.Logger.WithFields(logrus.Fields{"pass": ledger.NameWorkQueuePoller, "claimed": len(claims)}).Info("requested sweeps claimed")
	}
	// The claims are served whether or not the poll's own run can be written.
	run, err := p.Ledger.StartRun(closing, ledger.NameWorkQueuePoller, start, start, nil)
	if err != nil {
		return len(claims), err
	}
	return len(claims), p.Ledger.FinishRun(closing, run, ledger.Finish{End: clk.Now(), State: ledger.Completed, RowsDeleted: int64(len(claims)), StopReason: "claimed"})
}

// ledgerCloseTimeout bounds the writes that open and close a poll's runs.
const ledgerCloseTimeout = 5 * time.Second
