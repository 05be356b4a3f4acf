package config

import (
	"strings"
	"testing"
	"time"
)

const clusterHead = goodHead + `cluster:
  enabled: true
  etcd:
    endpoints: [127.0.0.1:2379]
`

func TestClusterSectionAccepted(t *testing.T) {
	t.Parallel()
	body := goodHead + `cluster:
  enabled: true
  name: retention
  provider: etcd
  etcd:
    endpoints: [127.0.0.1:2379, "http://10.0.0.2:2379"]
    prefix: /retention/
  bind: 127.0.0.1:0
  advertise: 10.0.0.1:7000
  max_concurrent_deletes: 4
  drain_helpers: 2
  fence_after: 6s
  startup_timeout: 30s
`
	c, err := parseConfig([]byte(body), envOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	cl := c.Cluster
	if !cl.Enabled || cl.Name != "retention" || len(cl.Etcd.Endpoints) != 2 || cl.Etcd.Prefix != "/retention/" ||
		cl.Bind != "127.0.0.1:0" || cl.Advertise != "10.0.0.1:7000" || cl.MaxConcurrentDeletes != 4 || cl.DrainHelpers != 2 ||
		cl.FenceAfterOr0() != 6*time.Second || cl.StartupTimeoutOr0() != 30*time.Second {
		t.Fatalf("cluster = %+v", cl)
	}
}

func TestClusterSectionMessages(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, body, want string }{
		{"sqlite", strings.Replace(clusterHead, "driver: postgres", "driver: sqlite", 1),
			`line 5: cluster.enabled: cluster mode needs PostgreSQL 14 or later`},
		{"no endpoints", goodHead + "cluster:\n  enabled: true\n", `line 4: cluster.etcd.endpoints: is empty`},
		{"endpoint without port", goodHead + "cluster:\n  enabled: true\n  etcd:\n    endpoints: [etcd.local]\n",
			`line 7: cluster.etcd.endpoints[0]: want host:port, got "etcd.local"`},
		{"endpoint with credentials", goodHead + "cluster:\n  enabled: true\n  etcd:\n    endpoints: [\"http://root:s3cret@etcd:2379\"]\n",
			`line 7: cluster.etcd.endpoints[0]: must not carry credentials`},
		{"endpoint bad port", goodHead + "cluster:\n  enabled: true\n  etcd:\n    endpoints: [\"127.0.0.1:99999\"]\n",
			`cluster.etcd.endpoints[0]: want a port between 1 and 65535, got "99999"`},
		{"prefix", clusterHead + "    prefix: retention\n", `line 8: cluster.etcd.prefix: want a key prefix that starts and ends with '/'`},
		{"provider", clusterHead + "  provider: consul\n", `line 8: cluster.provider: want "etcd"`},
		{"bind", clusterHead + "  bind: localhost\n", `line 8: cluster.bind: want host:port, got "localhost"`},
		{"advertise port 0", clusterHead + "  advertise: 10.0.0.1:0\n", `line 8: cluster.advertise: want a port between 1 and 65535`},
		{"helpers", clusterHead + "  drain_helpers: 99\n", `line 8: cluster.drain_helpers: must be between 0 and 16, got 99`},
		{"helpers without ledger", clusterHead + "  drain_helpers: 1\nledger:\n  enabled: false\n", `line 8: cluster.drain_helpers: needs the ledger`},
		{"negative slots", clusterHead + "  max_concurrent_deletes: -1\n", `line 8: cluster.max_concurrent_deletes: must not be negative`},
		{"fence too short", clusterHead + "  fence_after: 1s\n", `line 8: cluster.fence_after: must be at least 3s`},
		{"startup timeout", clusterHead + "  startup_timeout: 0s\n", `line 8: cluster.startup_timeout: must be positive`},
		{"name", clusterHead + "  name: a/b\n", `line 8: cluster.name: must not contain '/'`},
		{"unknown field", clusterHead + "  fence: 6s\n", `line 8: cluster: unknown field "fence"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := loadErrors(t, tt.body)
			if !strings.Contains(got, tt.want) {
				t.Fatalf("errors:\n%s\nwant one containing %q", got, tt.want)
			}
			if strings.Contains(got, "s3cret") {
				t.Fatalf("a secret shows: %s", got)
			}
		})
	}
}

func TestClusterSectionIgnoredWhenDisabled(t *testing.T) {
	t.Parallel()
	c, err := parseConfig([]byte(goodHead+"cluster:\n  enabled: false\n  drain_helpers: 99\n"), envOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatalf("a disabled cluster section was checked: %v", err)
	}
}

// Cluster mode is a configuration MySQL and MariaDB take (GET_LOCK is their session
// lock); the server's own refusals (Galera, a multiplexing proxy) come at startup.
func TestClusterSectionAcceptsMySQL(t *testing.T) {
	t.Parallel()
	body := strings.Replace(strings.Replace(clusterHead, "driver: postgres", "driver: mysql", 1),
		"dsn: postgres://app@127.0.0.1/app", "dsn: app@tcp(127.0.0.1:3306)/app", 1)
	c, err := parseConfig([]byte(body), envOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatalf("a MySQL cluster config: %v", err)
	}
}
