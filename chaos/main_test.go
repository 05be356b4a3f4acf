//go:build chaos

// Package chaos is the project's fault suite (`make chaos`). It builds the node binary,
// starts a PostgreSQL cluster of its own on a free port (so it may kill and restart it),
// and drives the node through faults: killed backends, a server restart, a tiny
// statement timeout, locked rows, a deadlock, restricting foreign keys the
// configuration does not list, SIGKILL, three nodes on one table, a table dropped and
// restored, a locked SQLite file and rows inserted across the cutoff. Every scenario
// compares the tables with a keep-set computed in SQL before the node ran, checks that
// no parent was half deleted, reads the ledger and checks the exit code.
//
// It runs only with the build tag: go test -tags chaos -count=1 -v ./chaos/
// It needs root (or the postgres tools' rights) to create and drop its cluster.
package chaos

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// suite is what every scenario shares: the node binary, the cluster and the figures.
type suite struct {
	bin     string
	dir     string
	pg      *cluster
	results *results
}

// the is the suite of this test binary, set up by TestMain.
var the *suite

func TestMain(m *testing.M) { os.Exit(runSuite(m)) }

func runSuite(m *testing.M) int {
	dir, err := os.MkdirTemp("", "retention-chaos")
	if err != nil {
		fmt.Fprintln(os.Stderr, "chaos:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	bin, err := buildNode(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "chaos:", err)
		return 1
	}
	pg, err := createCluster()
	if err != nil {
		fmt.Fprintln(os.Stderr, "chaos: a cluster of its own is required (run as root on a host with PostgreSQL's server packages):", err)
		return 1
	}
	defer pg.drop()
	the = &suite{bin: bin, dir: dir, pg: pg, results: &results{}}
	code := m.Run()
	the.results.print(os.Stdout)
	return code
}

// buildNode builds cmd/node into dir, with the race detector when this test binary
// has it, so a data race in the node under faults fails its scenario (exit 66).
func buildNode(dir string) (string, error) {
	bin := filepath.Join(dir, "retention")
	args := []string{"build", "-o", bin}
	if raceEnabled {
		args = append(args, "-race")
	}
	args = append(args, "github.com/retentionkit/retention/cmd/node")
	if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
		return "", fmt.Errorf("go %v: %w\n%s", args, err, out)
	}
	return bin, nil
}
