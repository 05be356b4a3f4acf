package passes_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/retentionkit/retention/passes"
)

// sweepErr runs one sweep of tbl as the runtime does and returns the rows it deleted and
// the error that ended it, if any.
func sweepErr(tbl *passes.Table, batchSize int, cutoff time.Time) (int, error) {
	p, err := tbl.Factory()(context.Background())
	if err != nil {
		return 0, err
	}
	if c, ok := p.(passes.Closer); ok {
		defer c.Close()
	}
	deleted := 0
	for batches := 0; batches < 10_000; batches++ {
		r := &reporter{}
		n, err := p.PurgeBatch(passes.WithBatchReporter(context.Background(), r), batchSize, cutoff)
		deleted += n
		if err != nil {
			return deleted, err
		}
		if n+len(r.skipped) < batchSize && !r.more {
			return deleted, nil
		}
	}
	return deleted, errors.New("the sweep does not end")
}

// TestTableNaiveTimestampNonUTCRefused: a timestamp-without-time-zone column holding the
// local time of a session whose TimeZone is America/Bogota (UTC-5), 1,440 rows one a
// minute from 12 hours before the cutoff to 12 hours after it. With no timestamp_zone
// the pass would read them as UTC and delete the 300 rows of the five hours after the
// cutoff early, so startup refuses (naming the pass, the column, the zone and both lines
// to choose from) and so does a sweep that skipped startup; with timestamp_zone set,
// exactly the 720 rows before the cutoff go and none inside retention.
func TestTableNaiveTimestampNonUTCRefused(t *testing.T) {
	const zone = "America/Bogota"
	db := postgresInZone(t, zone)
	f := &fixture{t: t, db: db, p: newFixturePrefix()}
	f.exec("CREATE TABLE {p}local (id BIGINT PRIMARY KEY, at TIMESTAMP NOT NULL)")
	f.exec("CREATE INDEX {p}local_at ON {p}local (at, id)")
	t.Cleanup(func() { _, _ = db.ExecContext(context.Background(), "DROP TABLE "+f.p+"local") })
	// The session writes each instant as its local wall time, as now() would.
	f.exec("INSERT INTO {p}local (id, at) SELECT i, CAST(? AS TIMESTAMPTZ) + (i - 720) * interval '1 minute' FROM generate_series(0, 1439) i", cutoffT)
	inside := func() int {
		var n int
		if err := db.NewRaw("SELECT count(*) FROM "+f.p+"local WHERE id >= 720").Scan(context.Background(), &n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	spec := passes.TableSpec{Table: f.p + "local", Key: "id", Timestamp: "at"}

	res := f.table(spec).ValidateStartup(context.Background())
	msg := res.Message()
	if !res.Failed() {
		t.Fatalf("startup without timestamp_zone on a %s session passed (%q, warnings %v); want a refusal", zone, msg, res.Warnings())
	}
	for _, want := range []string{`pass "audit-log"`, f.p + "local.at", zone, "timestamp_zone: UTC", "timestamp_zone: " + zone} {
		if !strings.Contains(msg, want) {
			t.Errorf("refusal %q does not name %q", msg, want)
		}
	}
	n, err := sweepErr(f.table(spec), 100, cutoffT)
	if err == nil || n != 0 || inside() != 720 {
		t.Fatalf("a sweep without timestamp_zone deleted %d rows (error %v), %d of 720 inside retention left; want a refusal and nothing deleted", n, err, inside())
	}

	spec.TimestampZone = zone
	tbl := f.table(spec)
	if res := tbl.ValidateStartup(context.Background()); res.Failed() || len(res.Warnings()) > 0 {
		t.Fatalf("startup with timestamp_zone: failed %v %q, warnings %v", res.Failed(), res.Message(), res.Warnings())
	}
	if n, err := sweepErr(tbl, 100, cutoffT); err != nil || n != 720 {
		t.Fatalf("with timestamp_zone %s: deleted %d (%v), want the 720 rows before the cutoff", zone, n, err)
	}
	if got := inside(); got != 720 {
		t.Fatalf("with timestamp_zone %s: %d of the 720 rows inside retention left", zone, got)
	}

	spec.TimestampZone = "UTC" // the other choice: the operator says the column holds UTC
	if res := f.table(spec).ValidateStartup(context.Background()); res.Failed() {
		t.Fatalf("startup with timestamp_zone: UTC: %q", res.Message())
	}
}
