package actors

import (
	"github.com/asynkron/protoactor-go/actor"

	"github.com/retentionkit/retention/core/pacing"
)

// admitPaced asks for the admission of an adaptive sweep's next batch, unless a listed
// replica's lag cannot be told: then the batch waits and the question is asked again
// every SignalEvery. Backing off cannot help a replica that is not replicating, and a
// rate read off an unknown lag would be a guess, so nothing is deleted until the
// replica answers with a lag (which the controller then judges as usual).
func (a *passActor) admitPaced(ctx actor.Context) {
	p := a.pace
	if p == nil || p.lagUnknown == "" {
		if p != nil && p.waiting {
			p.waiting = false
			a.showReplicaWait("")
		}
		a.requestAdmission(ctx)
		return
	}
	why := p.lagUnknown
	a.showReplicaWait(why)
	if !p.waiting {
		p.waiting = true
		st := p.ctl.State(a.d.clock.Now())
		a.d.publish(PaceChanged{Name: a.name(), Sweep: a.sweep.id, Reason: pacing.ReasonReplicaLag, Detail: "waiting: " + why,
			Batch: st.Batch, Delay: SignalEvery, Rate: st.Rate, Baseline: st.Baseline, Probe: st.Probe, ReplicaLag: st.ReplicaLag, At: a.d.clock.Now()})
	}
	a.schedule(ctx, SignalEvery, tickBatch)
}

// showReplicaWait sets the status's WaitingForReplica ("" once the wait is over). Pace
// is replaced by a changed copy, never changed in place: a status snapshot shares the
// pointer, and a reader (GET /passes) reads it outside the cell's lock (CI's race
// detector caught the in-place write).
func (a *passActor) showReplicaWait(why string) {
	a.cell.update(func(s *PassStatus) {
		if s.Pace == nil || s.Pace.WaitingForReplica == why {
			return
		}
		p := *s.Pace
		p.WaitingForReplica = why
		s.Pace = &p
	})
}
