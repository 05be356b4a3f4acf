// End-to-end test of the refusal of a naive timestamp column on a server that is not in UTC.
package main

import (
	"strings"
	"testing"

	"github.com/retentionkit/retention/passes"
)

// TestNaiveTimestampOnNonUTCServerExits2: a pass over a timestamp-without-time-zone
// column, with the session's TimeZone America/Bogota (set through the DSN) and no
// timestamp_zone: `validate` and `sweep` exit 2 naming the pass, the column, the zone
// and both lines to choose from, and the sweep deletes nothing; with timestamp_zone set
// the sweep deletes only the expired rows.
func TestNaiveTimestampOnNonUTCServerExits2(t *testing.T) {
	t.Parallel()
	e := newEnv(t, passes.DriverPostgres)
	e.exec(`CREATE TABLE ` + e.prefix + `local_log (id BIGINT PRIMARY KEY, at TIMESTAMP NOT NULL)`)
	e.exec(`CREATE INDEX ` + e.prefix + `local_log_at ON ` + e.prefix + `local_log (at, id)`)
	t.Cleanup(func() { e.exec(`DROP TABLE IF EXISTS ` + e.prefix + `local_log`) })
	// One row a minute of Bogota wall time from 24 hours before now to 24 hours after the
	// the retention of one day: 1,440 expired, 1,440 inside retention.
	e.exec(`INSERT INTO ` + e.prefix + `local_log (id, at) SELECT i, (now() AT TIME ZONE 'America/Bogota') - interval '2 days' + i * interval '1 minute' FROM generate_series(0, 2879) i`)
	e.dsn += "&TimeZone=America/Bogota"
	pass := "  - { name: local, table: " + e.prefix + "local_log, key: id, timestamp: at, retention_period: 1d, max_startup_stagger: 0s%s }"
	path := e.config(strings.Replace(pass, "%s", "", 1), "")
	want := []string{`pass "local"`, e.prefix + "local_log.at", "America/Bogota", "timestamp_zone: UTC", "timestamp_zone: America/Bogota"}
	for _, cmd := range [][]string{{"validate"}, {"sweep"}} {
		r := retention(t, append(cmd, "--config", path)...)
		if r.code != 2 {
			t.Fatalf("%s: exit %d, want 2\n%s%s", cmd[0], r.code, r.stdout, r.stderr)
		}
		for _, w := range want {
			if !strings.Contains(r.stderr, w) {
				t.Errorf("%s: stderr does not name %q:\n%s", cmd[0], w, r.stderr)
			}
		}
	}
	var left int
	if err := e.db.NewRaw("SELECT count(*) FROM "+e.prefix+"local_log").Scan(t.Context(), &left); err != nil || left != 2880 {
		t.Fatalf("after the refusals %d rows (%v), want all 2880", left, err)
	}
	path = e.config(strings.Replace(pass, "%s", ", timestamp_zone: America/Bogota", 1), "")
	if r := retention(t, "sweep", "--config", path); r.code != 0 {
		t.Fatalf("sweep with timestamp_zone: exit %d\n%s", r.code, r.stderr)
	}
	// Rows 1440 to 1449 are within ten minutes of the cutoff, which moves on while the
	// test runs: left out of the count.
	var inside, expired int
	err := e.db.NewRaw("SELECT count(*) FILTER (WHERE id >= 1450), count(*) FILTER (WHERE id < 1440) FROM "+e.prefix+"local_log").Scan(t.Context(), &inside, &expired)
	if err != nil || inside != 1430 || expired != 0 {
		t.Fatalf("with timestamp_zone: %d of the 1430 rows inside retention and %d of 1440 expired left (%v); want 1430 and 0", inside, expired, err)
	}
}
