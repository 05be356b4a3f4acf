package harness

import (
	"fmt"
	"os"
	"strings"
	"time"
)

// ClusterOptions are the cluster: section and the node settings a scenario varies.
// Zero values leave the node's defaults.
type ClusterOptions struct {
	// Name is cluster.name and, under a slash, the etcd key prefix, so two fleets on one
	// etcd never meet.
	Name string
	// MaxConcurrentDeletes is cluster.max_concurrent_deletes (0: the node's).
	MaxConcurrentDeletes int
	// NodeMaxConcurrentDeletes is node.max_concurrent_deletes (default 2).
	NodeMaxConcurrentDeletes int
	// DrainHelpers is cluster.drain_helpers.
	DrainHelpers int
	// FenceAfter is cluster.fence_after (0: the node's default).
	FenceAfter time.Duration
	// ShutdownGrace is node.shutdown_grace (default 10s).
	ShutdownGrace time.Duration
}

// PassOptions are the settings of every table pass the fixture's tables get.
type PassOptions struct {
	BatchSize          int           // default 1000
	BatchDelay         time.Duration // default 0
	SweepInterval      time.Duration // default 2s, so a moved pass sweeps again soon
	MaxBatchesPerSweep int           // default 50: several sweeps per backlog
}

func (o PassOptions) withDefaults() PassOptions {
	if o.BatchSize == 0 {
		o.BatchSize = 1000
	}
	if o.SweepInterval == 0 {
		o.SweepInterval = 2 * time.Second
	}
	if o.MaxBatchesPerSweep == 0 {
		o.MaxBatchesPerSweep = 50
	}
	return o
}

// PassYAML is the passes: entry of one fixture table: pass name = table name, the
// fixture's retention rule (older than RetentionDays, state done).
func PassYAML(table string, o PassOptions) string {
	o = o.withDefaults()
	return fmt.Sprintf(`  - name: %s
    table: %s
    key: id
    timestamp: created_at
    filter: { column: state, in: [done] }
    retention_period: %dd
    batch_size: %d
    batch_delay: %s
    sweep_interval: %s
    max_startup_stagger: 0s
    max_batches_per_sweep: %d
    batch_timeout: 1m
    statement_timeout: 30s
`, table, table, RetentionDays, o.BatchSize, o.BatchDelay, o.SweepInterval, o.MaxBatchesPerSweep)
}

// ConfigYAML is a whole node configuration in cluster mode: the database, an admin
// endpoint on a free port, the cluster section on etcd, and the passes.
func ConfigYAML(dsn, etcdEndpoint string, c ClusterOptions, passes string) string {
	return ConfigYAMLFor("postgres", dsn, etcdEndpoint, c, passes)
}

// ConfigYAMLFor is ConfigYAML for the database driver named driver (postgres, mysql).
func ConfigYAMLFor(driver, dsn, etcdEndpoint string, c ClusterOptions, passes string) string {
	if c.Name == "" {
		c.Name = "retention"
	}
	if c.NodeMaxConcurrentDeletes == 0 {
		c.NodeMaxConcurrentDeletes = 2
	}
	if c.ShutdownGrace == 0 {
		c.ShutdownGrace = 10 * time.Second
	}
	var b strings.Builder
	fmt.Fprintf(&b, "database:\n  driver: %s\n  dsn: %q\n", driver, dsn)
	fmt.Fprintf(&b, "node:\n  admin: 127.0.0.1:0\n  max_concurrent_deletes: %d\n  shutdown_grace: %s\n",
		c.NodeMaxConcurrentDeletes, c.ShutdownGrace)
	fmt.Fprintf(&b, "cluster:\n  enabled: true\n  name: %s\n  provider: etcd\n  etcd:\n    endpoints: [%q]\n    prefix: %q\n  bind: 127.0.0.1:0\n",
		c.Name, etcdEndpoint, EtcdPrefix(c.Name))
	if c.MaxConcurrentDeletes > 0 {
		fmt.Fprintf(&b, "  max_concurrent_deletes: %d\n", c.MaxConcurrentDeletes)
	}
	if c.DrainHelpers > 0 {
		fmt.Fprintf(&b, "  drain_helpers: %d\n", c.DrainHelpers)
	}
	if c.FenceAfter > 0 {
		fmt.Fprintf(&b, "  fence_after: %s\n", c.FenceAfter)
	}
	b.WriteString("  startup_timeout: 30s\n")
	b.WriteString("passes:\n")
	b.WriteString(passes)
	return b.String()
}

// EtcdPrefix is the etcd key prefix of the cluster named name.
func EtcdPrefix(name string) string { return "/" + name + "/" }

// WriteConfig writes body to path (mode 0600: it holds a DSN).
func WriteConfig(path, body string) error { return os.WriteFile(path, []byte(body), 0o600) }

// SingleConfigYAML is a node configuration outside cluster mode, for the single-node
// baseline beside the cluster: the same database, admin endpoint and passes.
func SingleConfigYAML(dsn string, maxConcurrentDeletes int, passes string) string {
	return fmt.Sprintf("database:\n  driver: postgres\n  dsn: %q\nnode:\n  admin: 127.0.0.1:0\n  max_concurrent_deletes: %d\n  shutdown_grace: 10s\npasses:\n%s",
		dsn, maxConcurrentDeletes, passes)
}
