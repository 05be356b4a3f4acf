package harness

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/retentionkit/retention/node/config"
)

// TestConfigYAMLLoads checks the configuration the harness writes is one the node
// accepts, with the cluster section as the scenarios set it: if the node's config
// contract moves, this fails here rather than as a node exiting 2 in every scenario.
func TestConfigYAMLLoads(t *testing.T) {
	passes := PassYAML("events", PassOptions{BatchDelay: 20 * time.Millisecond}) + PassYAML("orders", PassOptions{})
	cases := []struct {
		name string
		yaml string
	}{
		{"cluster", ConfigYAML("postgres://postgres@127.0.0.1:5432/db?sslmode=disable", "127.0.0.1:2379",
			ClusterOptions{Name: "mn-test", MaxConcurrentDeletes: 2, NodeMaxConcurrentDeletes: 4, DrainHelpers: 2, FenceAfter: 5 * time.Second}, passes)},
		{"cluster defaults", ConfigYAML("postgres://postgres@127.0.0.1:5432/db?sslmode=disable", "127.0.0.1:2379", ClusterOptions{}, passes)},
		{"single node", SingleConfigYAML("postgres://postgres@127.0.0.1:5432/db?sslmode=disable", 3, passes)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "retention.yaml")
			if err := WriteConfig(path, c.yaml); err != nil {
				t.Fatal(err)
			}
			cfg, err := config.LoadConfig(path)
			if err != nil {
				t.Fatalf("the node refuses the harness's configuration: %v\n%s", err, c.yaml)
			}
			if len(cfg.Passes) != 2 {
				t.Errorf("%d passes, want 2", len(cfg.Passes))
			}
			if want := strings.Contains(c.name, "cluster"); cfg.Cluster.Enabled != want {
				t.Errorf("cluster.enabled = %v, want %v", cfg.Cluster.Enabled, want)
			}
		})
	}
}

// TestSteady checks Steady reports true only after its condition held for the whole
// span, and starts over when it fails once.
func TestSteady(t *testing.T) {
	ok := true
	cond := Steady(time.Hour, func() (bool, error) { return ok, nil })
	if got, _ := cond(); got {
		t.Error("steady at the first check of an hour-long span")
	}
	quick := Steady(0, func() (bool, error) { return ok, nil })
	if got, _ := quick(); !got {
		t.Error("a zero span was not steady at once")
	}
	ok = false
	if got, _ := quick(); got {
		t.Error("steady while the condition fails")
	}
}
