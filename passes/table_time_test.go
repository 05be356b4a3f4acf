package passes_test

import (
	"strings"
	"testing"

	"github.com/retentionkit/retention/passes"
)

// TestTableTimestampZoneRefused: timestamp_zone must be a zone, means nothing for unix
// formats.
func TestTableTimestampZoneRefused(t *testing.T) {
	for _, tc := range []passes.TableSpec{
		{Table: "t", Key: "id", Timestamp: "at", TimestampZone: "Mars/Olympus"},
		{Table: "t", Key: "id", Timestamp: "at", TimestampZone: "Local"},
		{Table: "t", Key: "id", Timestamp: "at", TimestampFormat: passes.TimestampUnixSeconds, TimestampZone: "UTC"},
	} {
		if err := tc.Validate("p"); err == nil || !strings.Contains(err.Error(), "timestamp_zone") {
			t.Errorf("%+v: error %v, want one naming timestamp_zone", tc, err)
		}
	}
	// A database that cannot honour timestamp_zone refusing it at startup is stated in
	// the conformance suite (passes/passtest, zone area).
}
