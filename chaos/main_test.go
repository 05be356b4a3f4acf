//go:build chaos

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
	mariadb mariadbOnce // started by the first MariaDB scenario
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
	defer pg.Drop()
	the = &suite{bin: bin, dir: dir, pg: pg, results: &results{}}
	code := m.Run()
	if the.mariadb.server != nil {
		the.mariadb.server.Stop()
	}
	the.results.print(os.Stdout)
	return code
}

// buildNode builds cmd/node into dir, with the race detector when this test binary
// has it, so a data race in the node under faults fails its scenario (exit 66).
// CHAOS_NODE_BIN names a binary to run instead (another build of the node).
func buildNode(dir string) (string, error) {
	if bin := os.Getenv("CHAOS_NODE_BIN"); bin != "" {
		return bin, nil
	}
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
