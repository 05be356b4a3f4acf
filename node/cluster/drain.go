package cluster

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/passes"
)

// Cooperative drain. A pass whose sweep ends with work left (actors.StopReason
// LeavesWork: the batch limit, or rows locked by others) asks for its K helper
// identities name#1..name#K. The request travels through the ledger's work queue, the
// medium every member already polls: the member that owns a helper identity claims its
// request and activates the helper with that request as its first sweep. A helper is an
// ordinary registration of the same table pass (keyset batches with SKIP LOCKED, so
// helpers and their pass take disjoint batches), with its own identity, so its own
// advisory lock and its own delete slot: it never blocks its pass. It sweeps again at
// once while work remains and deactivates when a sweep comes up short.

// HelperName is the identity of pass's k-th drain helper.
func HelperName(pass string, k int) string { return pass + "#" + strconv.Itoa(k) }

// HelperOf returns the pass a helper identity ("name#k", k >= 1) serves.
func HelperOf(identity string) (string, bool) {
	i := strings.LastIndexByte(identity, '#')
	if i <= 0 {
		return "", false
	}
	k, err := strconv.Atoi(identity[i+1:])
	if err != nil || k < 1 || identity[i+1] == '+' || identity[i+1] == '0' {
		return "", false
	}
	return identity[:i], true
}

// Helpers returns the k helper registrations of reg: the same pass and options, each
// under its helper identity (and target, so the per-table gate does not serialise a
// helper behind its pass). wrap, when set, wraps each helper's factory with what its
// identity needs, such as the PostgreSQL advisory lock of that identity.
func Helpers(reg passes.Registration, k int, wrap func(identity string, f passes.Factory) passes.Factory) []passes.Registration {
	var out []passes.Registration
	for i := 1; i <= k; i++ {
		h := reg
		h.Name = HelperName(reg.Name, i)
		h.Target = h.Name
		h.Options.MaxStartupStagger = 0
		if wrap != nil {
			h.New = wrap(h.Name, reg.New)
		}
		out = append(out, h)
	}
	return out
}

// HelperRequester records a request for a helper's sweep, unless one is already waiting
// (the ledger's RequestSweepUnlessQueued).
type HelperRequester interface {
	RequestSweepUnlessQueued(ctx context.Context, pass string, at time.Time) (bool, error)
}

// DrainObserver runs cooperative drain from the runtime's events: register it with the
// runtime's observers. It acts off the observer hub's goroutine.
type DrainObserver struct {
	// Member is the member whose helpers it stops and re-triggers.
	Member *Member
	// Requests records helper requests (the ledger).
	Requests HelperRequester
	// Helpers is K, cluster.drain_helpers.
	Helpers int
}

// Observe asks for helpers when a pass leaves work, and keeps a helper going while work
// remains or stops it when it comes up short.
func (d *DrainObserver) Observe(e actors.Event) error {
	done, ok := e.(actors.SweepDone)
	if !ok || d.Helpers <= 0 {
		return nil
	}
	if _, helper := HelperOf(done.Name); helper {
		go d.helperDone(done)
		return nil
	}
	if done.WorkRemains {
		go d.askHelpers(done.Name)
	}
	return nil
}

func (d *DrainObserver) askHelpers(pass string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for k := 1; k <= d.Helpers; k++ {
		name := HelperName(pass, k)
		if _, err := d.Requests.RequestSweepUnlessQueued(ctx, name, time.Now()); err != nil {
			d.Member.o.Logger.WithError(err).WithField("pass", name).Warn("cluster: drain helper not requested")
		}
	}
}

func (d *DrainObserver) helperDone(done actors.SweepDone) {
	rt := d.Member.rt.Load()
	if rt == nil {
		return
	}
	if done.WorkRemains {
		if err := rt.Trigger(done.Name); err == nil {
			return
		}
	}
	d.Member.deactivateInBackground(done.Name)
}
