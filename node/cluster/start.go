package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/cluster"
	"github.com/asynkron/protoactor-go/cluster/clusterproviders/etcd"
	"github.com/asynkron/protoactor-go/cluster/identitylookup/disthash"
	"github.com/asynkron/protoactor-go/remote"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/retentionkit/retention/actors"
)

// UnreachableError is Join giving up: the membership provider did not answer within
// Options.StartupTimeout. The node exits 1 with it (a runtime failure, not bad
// configuration: the same file works once etcd is up).
type UnreachableError struct {
	Endpoints []string
	After     time.Duration
	Err       error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("cluster: etcd at %s unreachable for %v: %v", strings.Join(e.Endpoints, ", "), e.After, e.Err)
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// Join starts an actor system and makes it a member of the cluster. An etcd that does
// not answer is retried with backoff until Options.StartupTimeout, then Join fails with
// an *UnreachableError; when ctx ends first, Join returns ctx's error. protoactor's StartMember panics when its provider fails; Join
// recovers that panic and retries on a fresh actor system, so bad luck at startup is
// never a crash.
func Join(ctx context.Context, o Options) (*Member, error) {
	o = o.withDefaults()
	host, port, err := splitBind(o.Bind)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	deadline := start.Add(o.StartupTimeout)
	if o.Provider == nil {
		if err := waitForEtcd(ctx, o, deadline); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, &UnreachableError{Endpoints: o.Endpoints, After: time.Since(start).Round(time.Millisecond), Err: err}
		}
	}
	backoff := 100 * time.Millisecond
	for {
		m, err := tryJoin(o, host, port, time.Until(deadline))
		if err == nil {
			return m, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if time.Now().Add(backoff).After(deadline) {
			return nil, &UnreachableError{Endpoints: o.Endpoints, After: time.Since(start).Round(time.Millisecond), Err: err}
		}
		o.Logger.WithError(err).WithField("retry_in", backoff).Warn("cluster: joining failed, retrying")
		if err := wait(ctx, backoff); err != nil {
			return nil, err
		}
		backoff = min(2*backoff, 2*time.Second)
	}
}

// waitForEtcd asks etcd a cheap question until it answers or the deadline passes, so
// protoactor's StartMember (whose etcd calls have no timeout) is only called on an etcd
// that is up.
func waitForEtcd(ctx context.Context, o Options, deadline time.Time) error {
	cli, err := clientv3.New(etcdConfig(o))
	if err != nil {
		return err
	}
	defer cli.Close()
	backoff := 100 * time.Millisecond
	for {
		attempt, cancel := context.WithTimeout(ctx, min(2*time.Second, max(time.Until(deadline), time.Millisecond)))
		_, err = cli.Get(attempt, o.Prefix, clientv3.WithCountOnly())
		cancel()
		if err == nil {
			return nil
		}
		if time.Now().Add(backoff).After(deadline) || ctx.Err() != nil {
			return err
		}
		o.Logger.WithError(err).WithField("endpoints", strings.Join(o.Endpoints, ",")).Debug("cluster: etcd not answering yet")
		if err := wait(ctx, backoff); err != nil {
			return err
		}
		backoff = min(2*backoff, 2*time.Second)
	}
}

func etcdConfig(o Options) clientv3.Config {
	return clientv3.Config{Endpoints: o.Endpoints, DialTimeout: 5 * time.Second, Logger: zap.NewNop()}
}

func wait(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// tryJoin is one attempt: a fresh actor system, provider and cluster, started within
// budget.
func tryJoin(o Options, host string, port int, budget time.Duration) (*Member, error) {
	level := slog.LevelWarn
	if o.ProtoactorVerbose {
		level = slog.LevelInfo
	}
	provider, err := newProvider(o)
	if err != nil {
		return nil, err
	}
	m := &Member{o: o, provider: provider, fenced: make(chan *FencedError, 1), metrics: newMemberMetrics()}
	m.system = actor.NewActorSystem(actor.WithLoggerFactory(func(s *actor.ActorSystem) *slog.Logger {
		h := leavingFilter{Handler: actors.NewSlogHandler(o.Logger, level), leaving: &m.leavingNow}
		return slog.New(h).With("lib", "protoactor", "system", s.ID)
	}))
	system := m.system
	var ropts []remote.ConfigOption
	if o.Advertise != "" {
		ropts = append(ropts, remote.WithAdvertisedHost(o.Advertise))
	}
	kind := cluster.NewKind(Kind, actor.PropsFromProducer(func() actor.Actor { return &grain{m: m} }))
	cfg := cluster.Configure(o.Name, provider, disthash.New(), remote.Configure(host, port, ropts...),
		cluster.WithKinds(kind), cluster.WithRequestTimeout(5*time.Second))
	started := make(chan error, 1)
	go func() { started <- startMember(system, cfg, m) }()
	select {
	case err := <-started:
		if err != nil {
			return nil, err
		}
		return m, nil
	case <-time.After(max(budget, time.Second)):
		return nil, errors.New("protoactor's StartMember did not return")
	}
}

// startMember runs cluster.New and StartMember, turning their panics into an error and
// shutting down what a failed attempt had started.
func startMember(system *actor.ActorSystem, cfg *cluster.Config, m *Member) (err error) {
	var c *cluster.Cluster
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("protoactor cluster start: %v", r)
			if c != nil && c.Remote != nil {
				func() { defer func() { _ = recover() }(); c.Remote.Shutdown(false) }()
			}
		}
	}()
	c = cluster.New(system, cfg)
	m.cluster = c
	c.StartMember()
	return nil
}

func newProvider(o Options) (cluster.ClusterProvider, error) {
	if o.Provider != nil {
		return o.Provider()
	}
	// protoactor joins the base key, the cluster name and the member id with '/'.
	return etcd.NewWithConfig(strings.TrimSuffix(o.Prefix, "/"), etcdConfig(o))
}

func splitBind(bind string) (string, int, error) {
	host, p, err := net.SplitHostPort(bind)
	if err != nil {
		return "", 0, fmt.Errorf("cluster.bind: %w", err)
	}
	port, err := strconv.Atoi(p)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("cluster.bind: bad port %q", p)
	}
	return host, port, nil
}
