// Command seed writes the demo database `make run` sweeps, afresh on every run so that
// every run shows the whole story: an audit log of 200,000 rows over the last 300 days
// (90% past the 30-day retention) with attachments, reviews, legal holds and two rows an
// unlisted table still references, 20,000 sessions, and old ledger runs for the metadata
// cleanup. It then prints a guide to what the node is about to show and where to look.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"
)

func main() {
	driverName := flag.String("driver", "sqlite", "the demo database's driver: sqlite, or mysql (MySQL 8.0+, MariaDB 10.6+)")
	path := flag.String("db", "examples/demo/demo.db", "the SQLite database to write, or with -driver mysql the MySQL DSN naming the database (a previous demo copy is replaced)")
	rows := flag.Int("rows", 200000, "audit rows")
	admin := flag.String("admin", "127.0.0.1:9464", "the node's admin address, for the guide")
	config := flag.String("config", "examples/demo/retention.yaml", "the demo configuration, for the guide")
	flag.Parse()
	if *rows < 150000 {
		fmt.Fprintln(os.Stderr, "seed: -rows: want at least 150000: the story needs a sweep that stops at its bound and the rows an unlisted table references")
		os.Exit(2)
	}
	if err := checkNoNode(context.Background(), *admin); err != nil {
		fmt.Fprintln(os.Stderr, "seed:", err)
		os.Exit(1)
	}
	start := time.Now()
	g := guide{DB: *path, Rows: *rows, Admin: *admin, Config: *config}
	var err error
	switch *driverName {
	case "sqlite":
		err = reseed(context.Background(), *path, *rows, start.UTC())
	case "mysql":
		err = reseedMySQL(context.Background(), *path, *rows, start.UTC())
		g.Env, g.Default = mysqlEnv, mysqlDefault
	default:
		fmt.Fprintf(os.Stderr, "seed: -driver: want sqlite or mysql, got %q\n", *driverName)
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "seed:", err)
		os.Exit(1)
	}
	g.Took = time.Since(start)
	if err := g.print(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "seed:", err)
		os.Exit(1)
	}
}
