package sqlite_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/retentionkit/retention/passes"
)

// TestOpenRefusesClusterOptions: SQLite has no session locks, so opening it with a
// cluster's sweep-connection options is refused with passes.ErrClusterUnsupported
// (the conformance suite's sweeplock area states the refusal of the locks themselves).
func TestOpenRefusesClusterOptions(t *testing.T) {
	_, err := passes.OpenWith(context.Background(), passes.DriverSQLite, filepath.Join(t.TempDir(), "x.db"), passes.OpenOptions{Cluster: &passes.SweepConnOptions{}})
	if !errors.Is(err, passes.ErrClusterUnsupported) {
		t.Fatalf("OpenWith cluster options: %v; want ErrClusterUnsupported", err)
	}
}
