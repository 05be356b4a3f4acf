// Command cluster measures cluster mode on one host: how long the passes of a member
// killed with SIGKILL take to run again elsewhere, how long 1,000 passes on three
// members take to be owned and swept after start and after a kill, and how fast one
// backlog drains with one, two and three members and with drain helpers, beside a
// single node outside cluster mode. It writes a markdown report.
//
//	go run ./bench/cluster -out /tmp/cluster.md          # what make bench runs
//
// It needs etcd (Debian's etcd-server) and PostgreSQL: -dsn names a database it may
// empty (its public schema is dropped), or else it creates and drops
// retention_bench_cluster through -admin-dsn. It builds the node binary itself and
// runs the processes through multinode/harness, the same harness as the cluster suite.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"time"
)

type config struct {
	adminDSN string
	dsn      string
	reps     int
	rows     int
	passes   int
	out      string
	only     string
	keepLogs bool
}

func main() {
	var c config
	flag.StringVar(&c.adminDSN, "admin-dsn", envOr("BENCH_ADMIN_DSN", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"), "PostgreSQL DSN of a user that may create databases (unless -dsn)")
	flag.StringVar(&c.dsn, "dsn", os.Getenv("BENCH_CLUSTER_DSN"), "a database to use (and empty) instead of creating retention_bench_cluster")
	flag.IntVar(&c.reps, "reps", 5, "kills for the takeover figures; every drain variant runs reps/2 rounded up to an odd number of times")
	flag.IntVar(&c.rows, "rows", 300_000, "expired rows in the drained backlog")
	flag.IntVar(&c.passes, "passes", 1000, "passes for the ownership figures")
	flag.StringVar(&c.out, "out", "", "write the markdown report here (default stdout)")
	flag.StringVar(&c.only, "only", "", "run only the parts whose name contains this: takeover, owned, drain")
	flag.BoolVar(&c.keepLogs, "keep-logs", false, "keep the node and etcd logs (their directory is printed)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, c); err != nil {
		fmt.Fprintln(os.Stderr, "cluster:", err)
		stop()
		os.Exit(1)
	}
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func run(ctx context.Context, c config) error {
	b, err := setUp(ctx, c)
	if err != nil {
		return err
	}
	defer b.close()
	var report strings.Builder
	fmt.Fprintf(&report, "## Cluster mode (`bench/cluster`)\n\nProduced by `go run ./bench/cluster %s` on %s.\n\n",
		strings.Join(args(), " "), time.Now().UTC().Format("2006-01-02"))
	parts := []struct {
		name string
		run  func(context.Context, *strings.Builder) error
	}{
		{"takeover", b.takeover},
		{"owned", b.owned},
		{"drain", b.drainRates},
	}
	for _, p := range parts {
		if c.only != "" && !strings.Contains(p.name, c.only) {
			continue
		}
		fmt.Fprintf(os.Stderr, "cluster: %s ...\n", p.name)
		began := time.Now()
		if err := p.run(ctx, &report); err != nil {
			return fmt.Errorf("%s: %w", p.name, err)
		}
		fmt.Fprintf(os.Stderr, "cluster: %s took %v\n", p.name, time.Since(began).Round(time.Second))
	}
	if c.out == "" {
		_, err = os.Stdout.WriteString(report.String())
		return err
	}
	return os.WriteFile(c.out, []byte(report.String()), 0o644)
}

// args is the command line without what is not part of the measurement: where the
// report and logs go, and the DSNs (they may carry a password).
func args() []string {
	private := map[string]bool{"out": true, "dsn": true, "admin-dsn": true, "keep-logs": false}
	var out []string
	for i := 1; i < len(os.Args); i++ {
		name, _, hasValue := strings.Cut(strings.TrimLeft(os.Args[i], "-"), "=")
		takesValue, skip := private[name]
		if !skip {
			out = append(out, os.Args[i])
			continue
		}
		if takesValue && !hasValue {
			i++
		}
	}
	return out
}
