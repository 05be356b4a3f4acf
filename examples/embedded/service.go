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
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/sirupsen/logrus"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/node/admin"
	"github.com/retentionkit/retention/node/metrics"
	"github.com/retentionkit/retention/node/ui"
	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/ledger"
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
	// Every goroutine run starts on ctx (the backlog sampler's among them) ends when run
	// returns, not when the caller's context ends: with once, that may be never.
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
			done <- d
		}
	}))
	defer system.Root.Stop(watcher)

	c := newCache(time.Now())
	db, err := passes.Open(ctx, passes.DriverSQLite, cfg.dbPath)
	if err != nil {
		return err
	}
	defer db.Close()
	outbox, err := seedOutbox(ctx, db, time.Now())
	if err != nil {
		return err
	}
	// Refuse to start when the table is not what the declaration says.
	if res := outbox.ValidateStartup(ctx); res.Failed() {
		return errors.New(res.Message())
	}
	// The run ledger: its tables, then an observer that records every sweep.
	if _, err := ledger.Migrate(ctx, db, "svc_"); err != nil {
		return err
	}
	runs, err := ledger.New(db, "svc_")
	if err != nil {
		return err
	}

	cacheOpts := passes.DefaultOptions()
	cacheOpts.RetentionPeriod, cacheOpts.BatchSize, cacheOpts.MaxStartupStagger = passes.Retain(2*time.Hour), 50, 0
	outboxOpts := passes.DefaultOptions()
	outboxOpts.RetentionPeriod, outboxOpts.MaxStartupStagger = passes.Retain(24*time.Hour), 0
	// The outbox's backlog: measured for /metrics and the dashboard, and kept in the
	// ledger at the end of every sweep for the dashboard's backlog chart.
	backlog := metrics.NewBacklogCollector([]metrics.Table{{Table: outbox, Options: outboxOpts}})
	backlog.Recorder = runs
	m := metrics.NewObserver()
	// Observers hear each event in this order: the metrics and the ledger have a sweep
	// by the time the service's actor (and the backlog's sampler) is told of it.
	rt := actors.New(actors.Config{System: system, Logger: cfg.log, Observers: []actors.Observer{
		m, &actors.LedgerObserver{Ledger: runs}, actors.ActorObserver(system, watcher), backlog.SampleSweeps(ctx, 0, nil),
	}})
	if err := rt.Register(
		passes.Registration{Name: passes.NameFor[cache](), New: passes.Reuse(passes.PassFunc(c.purge)), Options: cacheOpts},
		outbox.Registration(outboxOpts),
	); err != nil {
		return err
	}

	// The service's own registry and server: retention's metrics and admin routes join
	// whatever the service already serves.
	reg := prometheus.NewRegistry()
	if err := m.Register(reg, rt, metrics.Options{ReadyAfterFailures: 3}); err != nil {
		return err
	}
	if err := reg.Register(backlog); err != nil {
		return err
	}
	// The dashboard rides on the admin handler (under /retention/ui/ here), reading the
	// same backlog measurement the service's /metrics serves.
	dashboard, err := ui.New(ui.Config{Runtime: rt, Ledger: runs, Backlog: backlog})
	if err != nil {
		return err
	}
	adm := admin.New(admin.Config{Runtime: rt, Ledger: runs, ReadyAfterFailures: 3, UI: dashboard})
	mux := http.NewServeMux()
	mux.Handle("/retention/", http.StripPrefix("/retention", adm))
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
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

	if err := rt.Start(ctx); err != nil {
		return err
	}
	adm.SetReady(true)
	if err := report(cfg.out, done, 2); err != nil {
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
	if err := rt.Stop(stopCtx); err != nil {
		return err
	}
	left, _ := db.NewSelect().TableExpr("outbox").Count(stopCtx)
	fmt.Fprintf(cfg.out, "left: %d cache entries, %d outbox rows; the service's actor system is still running: %v\n", c.len(), left, !system.IsStopped())
	return nil
}

// report prints the first n sweeps the service's actor heard.
func report(out io.Writer, done <-chan actors.SweepDone, n int) error {
	timeout := time.After(time.Minute) // a bound on a hang
	for range n {
		select {
		case d := <-done:
			fmt.Fprintf(out, "%s: deleted %d in %d batches (%s)\n", d.Name, d.Rows, d.Batches, d.Reason)
		case <-timeout:
			return errors.New("the sweeps did not finish")
		}
	}
	return nil
}
