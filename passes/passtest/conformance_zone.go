package passtest

import (
	"context"
	"strings"
	"testing"

	"github.com/retentionkit/retention/passes"
)

// zoneBehaviours: a database that stores no time zone cannot honour timestamp_zone, so
// startup refuses it instead of ignoring it and deleting rows hours early or late.
func zoneBehaviours() []behaviour {
	return []behaviour{{name: "timestamp_zone refused where not honoured", run: zoneRefused, skip: func(t Target) string {
		if !t.NoTimeZones {
			return "the database honours timestamp_zone"
		}
		return ""
	}}}
}

func zoneRefused(t *testing.T, db *DB) {
	a := newAudit(t, db, passes.TimestampNative)
	spec := a.spec()
	spec.TimestampZone = "Europe/Berlin"
	res := a.table(spec).ValidateStartup(context.Background())
	if !res.Failed() || !strings.Contains(res.Message(), "timestamp_zone") {
		t.Fatalf("startup with timestamp_zone: failed %v, %q; want a failure naming timestamp_zone", res.Failed(), res.Message())
	}
}
