package config

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/driver"
)

// ClusterConfig is the cluster: section. Several nodes with the same cluster name and
// etcd endpoints share the passes; each pass runs on one member at a time. Fields left
// out take node/cluster.Options' defaults; docs/cluster.md explains each.
type ClusterConfig struct {
	Enabled  bool       `yaml:"enabled"`
	Name     string     `yaml:"name"`
	Provider string     `yaml:"provider"`
	Etcd     EtcdConfig `yaml:"etcd"`
	// Bind is the host:port protoactor's remote listens on (port 0 picks a free one).
	Bind string `yaml:"bind"`
	// Advertise is the host:port other members dial, when Bind is not reachable as is.
	Advertise string `yaml:"advertise"`
	// MaxConcurrentDeletes is the cluster-wide number of delete slots per database; 0
	// takes node.max_concurrent_deletes.
	MaxConcurrentDeletes int `yaml:"max_concurrent_deletes"`
	// DrainHelpers is how many helper identities a pass with work left may fan out to.
	DrainHelpers   int       `yaml:"drain_helpers"`
	FenceAfter     *Duration `yaml:"fence_after"`
	StartupTimeout *Duration `yaml:"startup_timeout"`
}

// EtcdConfig is where the etcd membership provider finds etcd.
type EtcdConfig struct {
	Endpoints []string `yaml:"endpoints"`
	Prefix    string   `yaml:"prefix"`
}

// ProviderEtcd is the one membership provider cluster mode supports.
const ProviderEtcd = "etcd"

// MaxDrainHelpers bounds cluster.drain_helpers: each helper holds a connection and a
// cluster-wide slot, so more than a handful only queue for slots.
const MaxDrainHelpers = 16

// MinFenceAfter is the shortest cluster.fence_after: the etcd provider's member lease
// lives 3s, so a shorter bound would fence a member that is merely renewing.
const MinFenceAfter = 3 * time.Second

// FenceAfterOr0 is cluster.fence_after, or 0 when the file leaves it out.
func (c ClusterConfig) FenceAfterOr0() time.Duration { return durOr0(c.FenceAfter) }

// StartupTimeoutOr0 is cluster.startup_timeout, or 0 when the file leaves it out.
func (c ClusterConfig) StartupTimeoutOr0() time.Duration { return durOr0(c.StartupTimeout) }

func durOr0(d *Duration) time.Duration {
	if d == nil {
		return 0
	}
	return d.Duration
}

// clusterErrors checks the cluster section; add reports a problem at a field's path.
// The PostgreSQL version cluster mode needs is checked at startup, with the database.
func (c *Config) clusterErrors(add func(path, format string, args ...any)) {
	cl := c.Cluster
	if !cl.Enabled {
		return
	}
	// The driver says whether its database has the session locks cluster mode stands on;
	// an unknown driver is reported at database.driver.
	if d, err := passes.DriverNamed(c.Database.Driver); err == nil {
		if err := d.SessionLocks(); err != nil {
			add("cluster.enabled", "%v (session locks that die with their connection decide which member deletes)", err)
		}
	}
	if strings.ContainsAny(cl.Name, "/ \t\r\n") {
		add("cluster.name", "must not contain '/' or white space, got %q", cl.Name)
	}
	if cl.Provider != "" && cl.Provider != ProviderEtcd {
		add("cluster.provider", "want %q (the only provider supported), got %q", ProviderEtcd, cl.Provider)
	}
	if len(cl.Etcd.Endpoints) == 0 {
		add("cluster.etcd.endpoints", "is empty: list at least one etcd endpoint, such as 127.0.0.1:2379")
	}
	for i, e := range cl.Etcd.Endpoints {
		if err := checkEndpoint(e); err != nil {
			add(fmt.Sprintf("cluster.etcd.endpoints[%d]", i), "%v", err)
		}
	}
	if p := cl.Etcd.Prefix; p != "" && (!strings.HasPrefix(p, "/") || !strings.HasSuffix(p, "/") || strings.ContainsAny(p, " \t\r\n")) {
		add("cluster.etcd.prefix", "want a key prefix that starts and ends with '/' and has no white space, such as /retention/, got %q", p)
	}
	if cl.Bind != "" {
		if err := checkHostPort(cl.Bind, true); err != nil {
			add("cluster.bind", "%v", err)
		}
	}
	if cl.Advertise != "" {
		if err := checkHostPort(cl.Advertise, false); err != nil {
			add("cluster.advertise", "%v", err)
		}
	}
	if cl.MaxConcurrentDeletes < 0 {
		add("cluster.max_concurrent_deletes", "must not be negative, got %d", cl.MaxConcurrentDeletes)
	}
	if cl.DrainHelpers < 0 || cl.DrainHelpers > MaxDrainHelpers {
		add("cluster.drain_helpers", "must be between 0 and %d, got %d", MaxDrainHelpers, cl.DrainHelpers)
	}
	if cl.DrainHelpers > 0 && !c.LedgerEnabled() {
		add("cluster.drain_helpers", "needs the ledger (ledger.enabled): helpers are asked for through its work queue")
	}
	if cl.FenceAfter != nil && cl.FenceAfter.Duration < MinFenceAfter {
		add("cluster.fence_after", "must be at least %v (the etcd member lease), got %v", MinFenceAfter, cl.FenceAfter.Duration)
	}
	if cl.StartupTimeout != nil && cl.StartupTimeout.Duration <= 0 {
		add("cluster.startup_timeout", "must be positive, got %v", cl.StartupTimeout.Duration)
	}
}

// checkEndpoint accepts host:port or an http(s) URL with a host and port. Credentials in
// a URL are refused (etcd's client takes them separately) and never shown.
func checkEndpoint(e string) error {
	if strings.Contains(e, "://") {
		u, err := url.Parse(e)
		if err != nil {
			return fmt.Errorf("want host:port or http(s)://host:port, got %q", driver.RedactSecrets(e, driver.QuerySecrets(e)))
		}
		if u.User != nil {
			return fmt.Errorf("must not carry credentials (user:password@); got %s", redactURL(u))
		}
		if u.Scheme != "http" && u.Scheme != "https" {
			return fmt.Errorf("want scheme http or https, got %q", u.Scheme)
		}
		if u.Path != "" && u.Path != "/" || u.RawQuery != "" {
			return fmt.Errorf("want http(s)://host:port with no path or query, got %q", e)
		}
		return checkHostPort(u.Host, false)
	}
	return checkHostPort(e, false)
}

func redactURL(u *url.URL) string {
	c := *u
	c.User = url.User("xxxxx")
	return c.String()
}

// checkHostPort accepts host:port with a non-empty host and a port in 1-65535 (0 too
// when zeroOK: a bind address may ask for a free port).
func checkHostPort(s string, zeroOK bool) error {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return fmt.Errorf("want host:port, got %q", s)
	}
	if host == "" || strings.ContainsAny(host, " \t\r\n/@") {
		return fmt.Errorf("want host:port with a host name or IP address, got %q", s)
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 0 || n > 65535 || n == 0 && !zeroOK {
		low := 1
		if zeroOK {
			low = 0
		}
		return fmt.Errorf("want a port between %d and 65535, got %q", low, port)
	}
	return nil
}
