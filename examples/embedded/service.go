package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/sirupsen/logrus"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/node"
	"github.com/retentionkit/retention/passes"
)

// service is how the example runs: where it prints and logs, its database, its address,
// and whether it stops after the first sweeps.
type service struct {
	out    io.Writer
	log    *logrus.Logger
	dbPath string
	// addr is the HTTP address; "" is any free loopback port.
	addr string
	// once stops the service after both passes' first sweeps (after inspect, when
	// given, has seen the service's HTTP address) instead of serving until ctx ends.
	once    bool
	inspect func(addr string) error
}

// run starts the service, prints the dashboard's address, waits for both passes' first
// sweeps and prints what they did, then serves until ctx ends (or, with once, stops).
func run(ctx context.Context, cfg service) error {
	// Every goroutine run starts on ctx ends when run returns, not when the caller's
	// context ends: with once, that may be never. (The node's backlog sampler ends at
	// its Close.)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if cfg.log == nil {
		cfg.log = logrus.New()
		cfg.log.SetOutput(io.Discard)
	}
	// The service's own actor system, logging through the service's logger: protoactor's
	// default logger writes coloured lines of its own format whatever the output is.
	// Below warning it only says routine things ("actor system started").
	system := actor.NewActorSystem(actor.WithLoggerFactory(func(s *actor.ActorSystem) *slog.Logger {
		return slog.New(actors.NewSlogHandler(cfg.log, slog.LevelWarn)).With("lib", "protoactor", "system", s.ID)
	}))
	// ... and an actor of its own that watches retention.
	done := make(chan actors.SweepDone, 8)
	watcher := system.Root.Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if d, ok := c.Message().(actors.SweepDone); ok {
			select { // the ledger's loops keep sweeping after report stopped listening
			case done <- d:
			default:
			}
		}
	}))
	defer system.Root.Stop(watcher)

	c := newCache(time.Now())
	db, err := passes.Open(ctx, passes.DriverSQLite, cfg.dbPath)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := seedOutbox(ctx, db, time.Now()); err != nil {
		return err
	}
	nodeCfg, err := outboxConfig(cfg.dbPath)
	if err != nil {
		return err
	}
	cacheOpts := passes.DefaultOptions()
	cacheOpts.RetentionPeriod, cacheOpts.BatchSize, cacheOpts.MaxStartupStagger = passes.Retain(2*time.Hour), 50, 0
	cachePass := node.GoPass(passes.Registration{Name: passes.NameFor[cache](), New: passes.Reuse(passes.PassFunc(c.purge)), Options: cacheOpts})
	// The node: the file's outbox pass and the service's Go pass, in the service's actor
	// system; the node's metrics and ledger hear each event before the service's actor.
	n, err := node.Open(ctx, nodeCfg, node.Options{
		Passes: []node.Pass{cachePass}, Logger: cfg.log, System: system,
		Observers: []actors.Observer{actors.ActorObserver(system, watcher)},
	})
	if err != nil {
		return err
	}
	defer n.Close()
	// Refuse to start when the table is not what the declaration says.
	for _, p := range n.Passes() {
		if !p.IsTable() {
			continue
		}
		if res := p.Table.ValidateStartup(ctx); res.Failed() {
			return errors.New(res.Message())
		}
	}

	// The service's own server: retention's admin routes (the dashboard under
	// /retention/ui/) and metrics join whatever the service already serves.
	mux := http.NewServeMux()
	mux.Handle("/retention/", http.StripPrefix("/retention", n.Handler()))
	mux.Handle("/metrics", promhttp.HandlerFor(n.Gatherer(), promhttp.HandlerOpts{}))
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "the service's own page") })
	ln, err := net.Listen("tcp", cmp.Or(cfg.addr, "127.0.0.1:0"))
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	addr := ln.Addr().String()
	fmt.Fprintf(cfg.out, "dashboard: http://%s/retention/ui/ (metrics: http://%s/metrics)\n", addr, addr)

	if err := n.Start(ctx); err != nil {
		return err
	}
	if err := report(cfg.out, done, cachePass.Name(), "outbox"); err != nil {
		return err
	}
	if cfg.inspect != nil {
		if err := cfg.inspect(addr); err != nil {
			return err
		}
	}
	if !cfg.once {
		fmt.Fprintln(cfg.out, "serving; Ctrl-C stops")
		<-ctx.Done()
	}
	// Stopping is not cut short by the signal that ended the serving.
	stopCtx := context.WithoutCancel(ctx)
	if err := n.Stop(stopCtx); err != nil {
		return err
	}
	left, _ := db.NewSelect().TableExpr("outbox").Count(stopCtx)
	fmt.Fprintf(cfg.out, "left: %d cache entries, %d outbox rows; the service's actor system is still running: %v\n", c.len(), left, !system.IsStopped())
	return nil
}

// report prints the first sweep of each named pass the service's actor heard; the
// ledger's own loops (run recovery, cleanup) sweep too and are left out.
func report(out io.Writer, done <-chan actors.SweepDone, names ...string) error {
	timeout := time.After(time.Minute) // a bound on a hang
	for len(names) > 0 {
		select {
		case d := <-done:
			i := slices.Index(names, d.Name)
			if i < 0 {
				continue
			}
			names = slices.Delete(names, i, i+1)
			fmt.Fprintf(out, "%s: deleted %d in %d batches (%s)\n", d.Name, d.Rows, d.Batches, d.Reason)
		case <-timeout:
			return errors.New("the sweeps did not finish")
		}
	}
	return nil
}
