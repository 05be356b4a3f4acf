package config

import (
	"strings"
	"testing"
	"time"

	"github.com/retentionkit/retention/passes"
)

const pacingHead = "database:\n  driver: sqlite\n  dsn: x.db\n"

const pacingPasses = `passes:
  - { name: a, table: a, key: id, timestamp: at, retention_period: 1d }
  - { name: b, table: b, key: id, timestamp: at, retention_period: 1d, pacing: fixed,
      max_batches_per_sweep: 0, probe_query: "SELECT 1", max_replica_lag: 3s, commit_probe: true }
`

// node.pacing is the pacing of every pass that names none; a pass's own wins; the
// default is fixed; max_batches_per_sweep 0 is an unbounded sweep; the commit probe is
// off unless a pass turns it on.
func TestPacingDefaults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		node  string
		wantA passes.Pacing
	}{
		{"", ""},
		{"node:\n  pacing: fixed\n", passes.PacingFixed},
		{"node:\n  pacing: adaptive\n", passes.PacingAdaptive},
	}
	for _, tt := range tests {
		c, err := parseConfig([]byte(pacingHead+tt.node+pacingPasses), envOf(nil))
		if err != nil {
			t.Fatalf("%q: %v", tt.node, err)
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("%q: %v", tt.node, err)
		}
		built, err := c.TablePasses()
		if err != nil {
			t.Fatal(err)
		}
		a, b := built[0], built[1]
		if a.Options.Pacing != tt.wantA || a.Options.Adaptive() != (tt.wantA == passes.PacingAdaptive) {
			t.Errorf("%q: pass a pacing %q, want %q", tt.node, a.Options.Pacing, tt.wantA)
		}
		if b.Options.Pacing != passes.PacingFixed || b.Options.Bounded() || b.Options.MaxReplicaLag != 3*time.Second || b.Spec.ProbeQuery != "SELECT 1" || !b.Options.CommitProbe {
			t.Errorf("%q: pass b %+v %+v, want its own fixed pacing, unbounded, 3s lag, its probe and the commit probe", tt.node, b.Options, b.Spec)
		}
		if !a.Options.Bounded() || a.Options.ReplicaLagLimit() != time.Second || a.Options.CommitProbe {
			t.Errorf("%q: pass a %+v, want bounded with the 1s lag default and no commit probe", tt.node, a.Options)
		}
	}
}

func TestPacingRefused(t *testing.T) {
	t.Parallel()
	tests := []struct{ body, want string }{
		{"node:\n  pacing: fast\n", `line 5: node.pacing: want "fixed" or "adaptive", got "fast"`},
		{"passes:\n  - { name: a, table: a, key: id, timestamp: at, pacing: slow }\n", `pass "a": pacing must be "fixed" or "adaptive", got "slow"`},
		{"passes:\n  - { name: a, table: a, key: id, timestamp: at, probe_query: \"DELETE FROM a\" }\n", `pass "a": probe_query must be a query starting with SELECT or WITH`},
		{"passes:\n  - { name: a, table: a, key: id, timestamp: at, max_replica_lag: -1s }\n", `pass "a": max_replica_lag must not be negative`},
		{"passes:\n  - { name: a, table: a, key: id, timestamp: at, max_batches_per_sweep: -1 }\n", `pass "a": max_batches_per_sweep must not be negative, got -1 (0 means unbounded)`},
	}
	for _, tt := range tests {
		c, err := parseConfig([]byte(pacingHead+tt.body), envOf(nil))
		if err == nil {
			err = c.Validate()
		}
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: error %v, want %q", tt.body, err, tt.want)
		}
	}
}
