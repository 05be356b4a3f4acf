// Command embedded is a service that already runs its own protoactor ActorSystem and
// its own HTTP server, and embeds a retention node (node.Open) in both: a hand-written
// Go pass (expired cache entries in memory) and a declarative table pass (an outbox
// table in SQLite) share the service's actor system, the service's own actor hears
// every event, the run ledger records every sweep, and the service's server mounts the
// node's admin handler (/healthz, /readyz, /passes) with the dashboard under
// /retention/ui/ and serves the node's metrics registry on its own /metrics.
//
//	go run ./examples/embedded              # prints the dashboard's address, serves until Ctrl-C
//	go run ./examples/embedded -addr :8080  # on another address
//	go run ./examples/embedded -once        # the first sweeps, then stops (what its test runs)
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/sirupsen/logrus"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:9465", "the service's HTTP address (port 0: any free port)")
	once := flag.Bool("once", false, "stop after the first sweeps of both passes instead of serving until interrupted")
	flag.Parse()
	dir, err := os.MkdirTemp("", "embedded")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// Ctrl-C (or SIGTERM) ends the serving; the passes then stop gracefully.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// The service's logger, in the node's text format: logrus colours it only on a
	// terminal, so redirected output is plain text. Protoactor's own lines go through it.
	log := logrus.New()
	log.SetOutput(os.Stderr)
	err = run(ctx, service{out: os.Stdout, log: log, dbPath: filepath.Join(dir, "service.db"), addr: *addr, once: *once})
	stop()
	os.RemoveAll(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "embedded:", err)
		os.Exit(1)
	}
}
