package cluster

import (
	"time"

	"github.com/asynkron/protoactor-go/cluster"
	"github.com/sirupsen/logrus"

	"github.com/retentionkit/retention/core/clock"
)

// Defaults of Options' fields left zero.
const (
	DefaultName           = "retention"
	DefaultPrefix         = "/retention/"
	DefaultBind           = "127.0.0.1:0"
	DefaultFenceAfter     = 6 * time.Second // twice the etcd provider's 3s member lease
	DefaultStartupTimeout = 30 * time.Second
	DefaultReconcileEvery = time.Second
	DefaultLeaveGrace     = 30 * time.Second
)

// Kind is the grain kind every pass identity has.
const Kind = "pass"

// Options configure a Member. The zero value, given Endpoints, joins the cluster
// "retention" through etcd on loopback with the defaults above.
type Options struct {
	// Name is the cluster's name; members with the same name and etcd see each other.
	Name string
	// Endpoints are the etcd endpoints (host:port or http(s)://host:port).
	Endpoints []string
	// Prefix is the etcd key prefix the members register under (default "/retention/").
	Prefix string
	// Bind is the host:port the member's remote listens on; port 0 picks a free one
	// (default "127.0.0.1:0", so nothing listens beyond loopback unless asked).
	Bind string
	// Advertise is the host:port other members dial, when it differs from Bind (a
	// container's published address); empty advertises Bind's.
	Advertise string
	// DrainHelpers is how many helper identities (name#1..name#K) a pass whose sweep
	// left work may ask for; 0 turns cooperative drain off.
	DrainHelpers int
	// FenceAfter is how long the member's own id may be missing from its member list,
	// or the provider unhealthy, before it fences itself (default 6s).
	FenceAfter time.Duration
	// StartupTimeout bounds how long Join retries an unreachable etcd (default 30s).
	StartupTimeout time.Duration
	// ReconcileEvery is the reconciler's tick between topology events (default 1s).
	ReconcileEvery time.Duration
	// LeaveGrace bounds a deactivation's wait for the batch in flight (default 30s).
	LeaveGrace time.Duration
	// Logger receives the member's lines and protoactor's warnings; nil logs to stderr.
	Logger *logrus.Logger
	// ProtoactorVerbose lets protoactor's info lines through.
	ProtoactorVerbose bool
	// Clock times the reconciler's tick and the watchdog; nil is the wall clock.
	Clock clock.Clock
	// Provider builds the membership provider for each join attempt; nil is etcd on
	// Endpoints under Prefix. Tests pass protoactor's in-memory provider.
	Provider func() (cluster.ClusterProvider, error)
}

func (o Options) withDefaults() Options {
	if o.Name == "" {
		o.Name = DefaultName
	}
	if o.Prefix == "" {
		o.Prefix = DefaultPrefix
	}
	if o.Bind == "" {
		o.Bind = DefaultBind
	}
	if o.FenceAfter <= 0 {
		o.FenceAfter = DefaultFenceAfter
	}
	if o.StartupTimeout <= 0 {
		o.StartupTimeout = DefaultStartupTimeout
	}
	if o.ReconcileEvery <= 0 {
		o.ReconcileEvery = DefaultReconcileEvery
	}
	if o.LeaveGrace <= 0 {
		o.LeaveGrace = DefaultLeaveGrace
	}
	if o.Logger == nil {
		o.Logger = logrus.New()
	}
	o.Clock = clock.OrReal(o.Clock)
	return o
}
