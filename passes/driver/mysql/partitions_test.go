package mysql

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/retentionkit/retention/passes/driver"
)

// TestPartitionsRefused: the driver retires no partitions, and says the feature is
// PostgreSQL's, before it asks the server anything.
func TestPartitionsRefused(t *testing.T) {
	_, err := Driver{}.PartitionedTable(context.Background(), nil, "events")
	if !errors.Is(err, driver.ErrPartitionsUnsupported) || !strings.Contains(err.Error(), "PostgreSQL only") {
		t.Fatalf("PartitionedTable: %v", err)
	}
}
