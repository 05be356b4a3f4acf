package passtest

import (
	"context"
	"strings"
	"testing"

	"github.com/retentionkit/retention/passes"
)

// paceBehaviours: the pacing signals a table pass gives an adaptive sweep: its probe
// (the default one, or the configured probe_query) runs against the database, a probe
// the database refuses fails startup, and a database without replicas reports no lag;
// the commit probe runs where the database has one and leaves no row behind.
func paceBehaviours() []behaviour {
	return []behaviour{
		{name: "probe runs, a refused probe fails startup, no replica lag", run: paceProbe},
		{name: "commit probe runs or reports none, and changes no row", run: paceCommitProbe},
	}
}

func paceCommitProbe(t *testing.T, db *DB) {
	ctx := context.Background()
	a := newAudit(t, db, passes.TimestampNative)
	a.log(1, auditCutoff, "done")
	sig := a.table(a.spec()).Signals()
	for range 3 {
		if _, err := sig.CommitProbe(ctx); err != nil {
			t.Fatalf("commit probe: %v", err)
		}
	}
	if n := len(a.ids("audit_log")); n != 1 {
		t.Errorf("%d rows after three commit probes, want the 1 there was", n)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if has, err := sig.CommitProbe(cancelled); has && err == nil {
		t.Error("a commit probe on a cancelled context reported success")
	}
}

func paceProbe(t *testing.T, db *DB) {
	ctx := context.Background()
	a := newAudit(t, db, passes.TimestampNative)
	a.log(1, auditCutoff, "done")
	if err := a.table(a.spec()).Signals().Probe(ctx); err != nil {
		t.Fatalf("default probe: %v", err)
	}
	spec := a.spec()
	spec.ProbeQuery = "SELECT state FROM audit_log WHERE id = 1"
	if err := a.table(spec).Signals().Probe(ctx); err != nil {
		t.Fatalf("configured probe: %v", err)
	}
	if res := a.table(spec).ValidateStartup(ctx); res.Failed() {
		t.Fatalf("startup with a good probe: %s", res.Message())
	}
	spec.ProbeQuery = "SELECT no_such_column FROM audit_log"
	if res := a.table(spec).ValidateStartup(ctx); !res.Failed() || !strings.Contains(res.Message(), "probe_query") {
		t.Errorf("startup with a bad probe: %v %q, want a failure naming probe_query", res.Failed(), res.Message())
	}
	lag, replicas, err := a.table(a.spec()).Signals().ReplicaLag(ctx)
	if err != nil || replicas || lag != 0 {
		t.Errorf("replica lag on a database without replicas: %v %v %v", lag, replicas, err)
	}
}
