package passes_test

import (
	"context"
	"database/sql"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/driver/pgdriver"

	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/dbtest"
	"github.com/retentionkit/retention/passes/passtest"
)

// postgresInZone opens the test server with the session TimeZone set to zone, as a
// server configured with it would hand every session.
func postgresInZone(t *testing.T, zone string) *bun.DB {
	t.Helper()
	dbtest.Postgres(t) // skips (locally) or fails (CI) when there is no server
	connector := pgdriver.NewConnector(pgdriver.WithDSN(dbtest.PostgresURL()), pgdriver.WithConnParams(map[string]any{"TimeZone": zone}))
	db := bun.NewDB(sql.OpenDB(connector), pgdialect.New())
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// TestTableNaiveTimestampZone: a timestamp-without-time-zone column that the
// application fills with local time (the session's TimeZone is UTC-5) is compared in
// that zone when timestamp_zone names it, so no row is deleted before its time; and
// startup refuses such a column when no timestamp_zone is set.
func TestTableNaiveTimestampZone(t *testing.T) {
	const zone = "America/Bogota" // UTC-5 all year
	db := postgresInZone(t, zone)
	f := &fixture{t: t, db: db, p: newFixturePrefix()}
	f.exec("CREATE TABLE {p}naive (id BIGINT PRIMARY KEY, at TIMESTAMP NOT NULL)")
	f.exec("CREATE INDEX {p}naive_at ON {p}naive (at, id)")
	t.Cleanup(func() { _, _ = db.ExecContext(context.Background(), "DROP TABLE "+f.p+"naive") })
	instants := map[int]time.Duration{1: -time.Hour, 2: time.Hour, 3: 4*time.Hour + 59*time.Minute, 4: -time.Second, 5: 0, 6: -6 * time.Hour}
	for id, d := range instants {
		// The session converts the instant to its local wall time, as now() would.
		f.exec("INSERT INTO {p}naive (id, at) VALUES (?, CAST(? AS TIMESTAMPTZ))", id, cutoffT.Add(d))
	}
	spec := passes.TableSpec{Table: f.p + "naive", Key: "id", Timestamp: "at"}

	res := f.table(spec).ValidateStartup(context.Background())
	if !res.Failed() || !strings.Contains(res.Message(), "timestamp_zone: "+zone) {
		t.Fatalf("startup without timestamp_zone: failed %v, message %q; want a refusal naming timestamp_zone and %s", res.Failed(), res.Message(), zone)
	}

	spec.TimestampZone = zone
	tbl := f.table(spec)
	res = tbl.ValidateStartup(context.Background())
	if res.Failed() || len(res.Warnings()) > 0 {
		t.Fatalf("startup with timestamp_zone: failed %v %q, warnings %v", res.Failed(), res.Message(), res.Warnings())
	}
	oldest, ok, err := tbl.OldestExpired(context.Background(), cutoffT)
	if err != nil || !ok || !oldest.Equal(cutoffT.Add(-6*time.Hour)) {
		t.Fatalf("oldest expired = %v %v %v, want %v", oldest, ok, err, cutoffT.Add(-6*time.Hour))
	}
	dry, err := tbl.DryRun(context.Background(), cutoffT)
	if err != nil || dry.Eligible != 3 {
		t.Fatalf("dry run = %+v %v, want 3 eligible", dry, err)
	}
	if n := passtest.Sweep(t, tbl, 2, cutoffT).Deleted; n != 3 {
		t.Fatalf("deleted %d, want 3", n)
	}
	if got := f.ids("naive"); !slices.Equal(got, []int64{2, 3, 5}) {
		t.Fatalf("kept %v, want [2 3 5]: the rows at or after the cutoff, read in %s", got, zone)
	}
}

// TestTableNaiveTimestampUTCNoWarning: on a UTC server a naive column needs no zone.
func TestTableNaiveTimestampUTCNoWarning(t *testing.T) {
	db := postgresInZone(t, "UTC")
	f := &fixture{t: t, db: db, p: newFixturePrefix()}
	f.exec("CREATE TABLE {p}naive (id BIGINT PRIMARY KEY, at TIMESTAMP NOT NULL)")
	f.exec("CREATE INDEX {p}naive_at ON {p}naive (at, id)")
	t.Cleanup(func() { _, _ = db.ExecContext(context.Background(), "DROP TABLE "+f.p+"naive") })
	res := f.table(passes.TableSpec{Table: f.p + "naive", Key: "id", Timestamp: "at"}).ValidateStartup(context.Background())
	if res.Failed() || len(res.Warnings()) > 0 {
		t.Fatalf("failed %v %q, warnings %v", res.Failed(), res.Message(), res.Warnings())
	}
}

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

// TestTableTimestampColumnType: a timestamp column whose type does not fit the format
// fails startup on PostgreSQL instead of failing (or misreading) every sweep.
func TestTableTimestampColumnType(t *testing.T) {
	db := dbtest.Postgres(t)
	f := &fixture{t: t, db: db, p: newFixturePrefix()}
	f.exec("CREATE TABLE {p}typed (id BIGINT PRIMARY KEY, at_text TEXT, at_int BIGINT, at_tz TIMESTAMPTZ)")
	t.Cleanup(func() { _, _ = db.ExecContext(context.Background(), "DROP TABLE "+f.p+"typed") })
	for _, spec := range []passes.TableSpec{
		{Table: f.p + "typed", Key: "id", Timestamp: "at_text"},
		{Table: f.p + "typed", Key: "id", Timestamp: "at_int"},
		{Table: f.p + "typed", Key: "id", Timestamp: "at_tz", TimestampFormat: passes.TimestampUnixSeconds},
	} {
		if res := f.table(spec).ValidateStartup(context.Background()); !res.Failed() || !strings.Contains(res.Message(), "is of type") {
			t.Errorf("%s as %q: %v %q, want a failure naming the type", spec.Timestamp, spec.TimestampFormat, res.Failed(), res.Message())
		}
	}
}

// TestTableSQLiteTextOffsets: SQLite text timestamps that carry offsets (or a T and a
// Z) are compared as instants, not as text: none is deleted before its time, and the
// ones whose instant has passed go whatever their text.
func TestTableSQLiteTextOffsets(t *testing.T) {
	db := dbtest.SQLite(t)
	f := &fixture{t: t, db: db, p: newFixturePrefix()}
	f.exec("CREATE TABLE {p}texts (id INTEGER PRIMARY KEY, at TEXT NOT NULL)")
	f.exec("CREATE INDEX {p}texts_at ON {p}texts (at, id)")
	rows := map[int]string{ // the cutoff is 2026-06-01 12:00:00Z
		1: "2026-06-01 07:30:00-05:00",      // 12:30Z: kept (as text it sorts before the cutoff)
		2: "2026-06-01 11:00:00-05:00",      // 16:00Z: kept
		3: "2026-06-01 13:30:00+02:00",      // 11:30Z: expired
		4: "2026-06-01 11:59:59.999+00:00",  // expired
		5: "2026-06-01 12:00:00+00:00",      // at the cutoff: kept
		6: "2026-06-01T11:00:00Z",           // expired
		7: "not a time",                     // unreadable: kept
		8: "2026-05-31 23:00:00-14:00",      // 2026-06-01 13:00Z: kept
		9: "2026-06-01 12:00:00.0004+00:00", // after the cutoff by 0.4 ms: kept
	}
	for id, at := range rows {
		f.exec("INSERT INTO {p}texts (id, at) VALUES (?, ?)", id, at)
	}
	tbl := f.table(passes.TableSpec{Table: f.p + "texts", Key: "id", Timestamp: "at"})
	oldest, ok, err := tbl.OldestExpired(context.Background(), cutoffT)
	if err != nil || !ok || !oldest.Equal(cutoffT.Add(-time.Hour)) {
		t.Fatalf("oldest expired = %v %v %v, want %v", oldest, ok, err, cutoffT.Add(-time.Hour))
	}
	if n := passtest.Sweep(t, tbl, 2, cutoffT).Deleted; n != 3 {
		t.Errorf("deleted %d, want 3", n)
	}
	if got := f.ids("texts"); !slices.Equal(got, []int64{1, 2, 5, 7, 8, 9}) {
		t.Fatalf("kept %v, want [1 2 5 7 8 9]", got)
	}
}
