// Command embedded is a service that already runs its own protoactor ActorSystem and
// its own HTTP server, and embeds retention in both: a hand-written Go pass (expired
// cache entries in memory) and a declarative table pass (an outbox table in SQLite) share
// the service's actor system, the service's own actor hears every event, the run ledger
// records every sweep, and the service's server mounts the node's admin handler
// (/healthz, /readyz, /passes) and serves the retention metrics from the service's own
// Prometheus registry.
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
)

func main() {
	dir, err := os.MkdirTemp("", "embedded")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer os.RemoveAll(dir)
	if err := run(context.Background(), os.Stdout, filepath.Join(dir, "service.db"), nil); err != nil {
		fmt.Fprintln(os.Stderr, "embedded:", err)
		os.Exit(1)
	}
}
