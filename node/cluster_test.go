package node

import (
	"slices"
	"testing"
	"time"

	"github.com/retentionkit/retention/node/config"
	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/dbtest"
	"github.com/retentionkit/retention/passes/ledger"
)

// A drain helper's runs are pruned with its pass's retention wherever the pass is listed.
func TestHelperRunsArePrunedLikeTheirPass(t *testing.T) {
	week := config.Duration{Duration: 7 * 24 * time.Hour}
	cfg := &config.Config{
		Cluster:         config.ClusterConfig{Enabled: true, DrainHelpers: 2},
		MetadataCleanup: config.MetadataCleanupConfig{Names: []config.CleanupNameEntry{{Name: "events", RetentionPeriod: &week}, {Name: "other-runs"}}},
	}
	l, err := ledger.New(dbtest.SQLite(t), "h_")
	if err != nil {
		t.Fatal(err)
	}
	n := &Node{cfg: cfg, ledger: l, passes: []Pass{GoPass(passes.Registration{Name: "events"})}}
	if err := n.helperCleanup(); err != nil {
		t.Fatal(err)
	}
	groupOf := func(name string) (time.Duration, bool) {
		for _, g := range n.plan.Groups {
			if slices.Contains(g.Names, name) {
				return g.Retention, true
			}
		}
		return 0, false
	}
	for _, name := range []string{"events", "events#1", "events#2"} {
		if d, ok := groupOf(name); !ok || d != week.Duration {
			t.Errorf("%s: retention %v (listed %v), want %v", name, d, ok, week.Duration)
		}
	}
	if _, ok := groupOf("other-runs#1"); ok {
		t.Error("a listed name that is no pass got helper entries")
	}
}
