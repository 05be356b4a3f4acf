package passtest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/retentionkit/retention/passes"
)

// zoneBehaviours: a naive timestamp column (wall times without a zone) is read in the
// pass's timestamp_zone, and refused without one on a server whose sessions are off
// UTC; a database that stores no time zone cannot honour timestamp_zone, so startup
// refuses it instead of ignoring it and deleting rows hours early or late.
func zoneBehaviours() []behaviour {
	zoned := func(t Target) string {
		if t.NoTimeZones {
			return "the database stores no time zone, so no session has one"
		}
		return ""
	}
	return []behaviour{
		{name: "timestamp_zone refused where not honoured", run: zoneRefused, skip: func(t Target) string {
			if !t.NoTimeZones {
				return "the database honours timestamp_zone"
			}
			return ""
		}},
		{name: "naive column read in timestamp_zone", onTarget: naiveInZone, skip: zoned},
		{name: "naive column off UTC refused without timestamp_zone", onTarget: naiveRefusedOffUTC, skip: zoned},
		{name: "naive column on a UTC session needs no zone", onTarget: naiveUTC, skip: zoned},
		{name: "timestamp column of the wrong type refused at startup", run: wrongTimestampType, skip: func(t Target) string {
			if t.NoColumnTypes {
				return "the database's columns have no types to check"
			}
			return ""
		}},
	}
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

// offUTC is the session zone of the naive behaviours: UTC-5 all year.
const offUTC = "America/Bogota"

// naiveTable creates table local (id, at), at a timestamp without time zone, and
// fills it with one row per instant, written as the instant's wall time in zone, as an
// application whose sessions are in zone writes now().
func naiveTable(t *testing.T, db *DB, zone string, instants map[int]time.Time) {
	t.Helper()
	ctx := context.Background()
	for _, stmt := range []string{
		"CREATE TABLE local (id BIGINT PRIMARY KEY, at " + db.Type("TIMESTAMP") + " NOT NULL)",
		"CREATE INDEX local_at ON local (at, id)",
	} {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	loc, err := time.LoadLocation(zone)
	if err != nil {
		t.Fatal(err)
	}
	var (
		tuples []string
		args   []any
	)
	flush := func() {
		if len(tuples) == 0 {
			return
		}
		if _, err := db.ExecContext(ctx, "INSERT INTO local (id, at) VALUES "+strings.Join(tuples, ", "), args...); err != nil {
			t.Fatalf("insert into local: %v", err)
		}
		tuples, args = nil, nil
	}
	for id, at := range instants {
		tuples = append(tuples, "(?, ?)")
		args = append(args, id, at.In(loc).Format("2006-01-02 15:04:05.000000"))
		if len(tuples) == insertChunk {
			flush()
		}
	}
	flush()
}

// localIDs counts the rows of local whose id is at least from (the rows inside
// retention, in naiveRefusedOffUTC).
func localIDs(t *testing.T, db *DB, from int) int {
	t.Helper()
	n, err := db.NewSelect().TableExpr("local").Where("id >= ?", from).Count(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return int(n)
}

func localTable(t *testing.T, db *DB, zone string) *passes.Table {
	t.Helper()
	tbl, err := passes.NewTable(db.DB, "local-times", passes.TableSpec{Table: "local", Key: "id", Timestamp: "at", TimestampZone: zone})
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// naiveInZone: wall times written in the session's zone (UTC-5) are compared in that
// zone when timestamp_zone names it, so no row goes before its time: the oldest, the
// dry run and the sweep agree.
func naiveInZone(t *testing.T, target Target) {
	db := target.OpenInZone(t, offUTC)
	offsets := map[int]time.Duration{1: -time.Hour, 2: time.Hour, 3: 4*time.Hour + 59*time.Minute, 4: -time.Second, 5: 0, 6: -6 * time.Hour}
	instants := map[int]time.Time{}
	for id, d := range offsets {
		instants[id] = auditCutoff.Add(d)
	}
	naiveTable(t, db, offUTC, instants)
	res := localTable(t, db, "").ValidateStartup(context.Background())
	if !res.Failed() || !strings.Contains(res.Message(), "timestamp_zone: "+offUTC) {
		t.Fatalf("startup without timestamp_zone: failed %v, message %q; want a refusal naming timestamp_zone and %s", res.Failed(), res.Message(), offUTC)
	}
	tbl := localTable(t, db, offUTC)
	if res := tbl.ValidateStartup(context.Background()); res.Failed() || len(res.Warnings()) > 0 {
		t.Fatalf("startup with timestamp_zone: failed %v %q, warnings %v", res.Failed(), res.Message(), res.Warnings())
	}
	oldest, ok, err := tbl.OldestExpired(context.Background(), auditCutoff)
	if err != nil || !ok || !oldest.Equal(auditCutoff.Add(-6*time.Hour)) {
		t.Fatalf("oldest expired = %v %v %v, want %v", oldest, ok, err, auditCutoff.Add(-6*time.Hour))
	}
	dry, err := tbl.DryRun(context.Background(), auditCutoff)
	if err != nil || dry.Eligible != 3 {
		t.Fatalf("dry run = %+v %v, want 3 eligible", dry, err)
	}
	if n := Sweep(t, tbl, 2, auditCutoff).Deleted; n != 3 {
		t.Fatalf("deleted %d, want 3", n)
	}
	requireTableIDs(t, db, "local", []int64{2, 3, 5}, "the rows at or after the cutoff, read in "+offUTC)
}

// naiveRefusedOffUTC: 1,440 wall times one a minute from 12 hours before the cutoff to
// 12 hours after it, written in a UTC-5 session. Read as UTC they would lose the 300
// rows of the five hours after the cutoff early, so startup refuses a pass without
// timestamp_zone (naming the pass, the column, the zone and both lines to choose from)
// and so does a sweep that skipped startup; with timestamp_zone set, exactly the 720
// rows before the cutoff go and none inside retention; timestamp_zone: UTC (the column
// holds UTC) is accepted too.
func naiveRefusedOffUTC(t *testing.T, target Target) {
	db := target.OpenInZone(t, offUTC)
	instants := map[int]time.Time{}
	for i := range 1440 {
		instants[i] = auditCutoff.Add(time.Duration(i-720) * time.Minute)
	}
	naiveTable(t, db, offUTC, instants)
	res := localTable(t, db, "").ValidateStartup(context.Background())
	msg := res.Message()
	if !res.Failed() {
		t.Fatalf("startup without timestamp_zone on a %s session passed (%q, warnings %v); want a refusal", offUTC, msg, res.Warnings())
	}
	for _, want := range []string{`pass "local-times"`, "local.at", offUTC, "timestamp_zone: UTC", "timestamp_zone: " + offUTC} {
		if !strings.Contains(msg, want) {
			t.Errorf("refusal %q does not name %q", msg, want)
		}
	}
	if res, err := sweep(localTable(t, db, ""), 100, auditCutoff); err == nil || res.Deleted != 0 || localIDs(t, db, 720) != 720 {
		t.Fatalf("a sweep without timestamp_zone deleted %d rows (error %v), %d of 720 inside retention left; want a refusal and nothing deleted", res.Deleted, err, localIDs(t, db, 720))
	}
	tbl := localTable(t, db, offUTC)
	if res := tbl.ValidateStartup(context.Background()); res.Failed() || len(res.Warnings()) > 0 {
		t.Fatalf("startup with timestamp_zone: failed %v %q, warnings %v", res.Failed(), res.Message(), res.Warnings())
	}
	if n := Sweep(t, tbl, 100, auditCutoff).Deleted; n != 720 {
		t.Fatalf("with timestamp_zone %s: deleted %d, want the 720 rows before the cutoff", offUTC, n)
	}
	if got := localIDs(t, db, 720); got != 720 {
		t.Fatalf("with timestamp_zone %s: %d of the 720 rows inside retention left", offUTC, got)
	}
	if res := localTable(t, db, "UTC").ValidateStartup(context.Background()); res.Failed() {
		t.Fatalf("startup with timestamp_zone: UTC: %q", res.Message())
	}
}

// naiveUTC: on a UTC session a naive column needs no timestamp_zone, and startup says
// nothing of it.
func naiveUTC(t *testing.T, target Target) {
	db := target.OpenInZone(t, "UTC")
	naiveTable(t, db, "UTC", nil)
	res := localTable(t, db, "").ValidateStartup(context.Background())
	if res.Failed() || len(res.Warnings()) > 0 {
		t.Fatalf("failed %v %q, warnings %v", res.Failed(), res.Message(), res.Warnings())
	}
}

// wrongTimestampType: a timestamp column whose type does not fit the format (text or an
// integer for a native time, a time for unix seconds) fails startup, naming the type,
// instead of failing or misreading every sweep.
func wrongTimestampType(t *testing.T, db *DB) {
	if _, err := db.ExecContext(context.Background(), "CREATE TABLE typed (id BIGINT PRIMARY KEY, at_text TEXT, at_int BIGINT, at_tz "+db.Type("TIMESTAMPTZ")+")"); err != nil {
		t.Fatal(err)
	}
	for _, spec := range []passes.TableSpec{
		{Table: "typed", Key: "id", Timestamp: "at_text"},
		{Table: "typed", Key: "id", Timestamp: "at_int"},
		{Table: "typed", Key: "id", Timestamp: "at_tz", TimestampFormat: passes.TimestampUnixSeconds},
	} {
		tbl, err := passes.NewTable(db.DB, "typed", spec)
		if err != nil {
			t.Fatal(err)
		}
		if res := tbl.ValidateStartup(context.Background()); !res.Failed() || !strings.Contains(res.Message(), "is of type") {
			t.Errorf("%s as %q: %v %q, want a failure naming the type", spec.Timestamp, spec.TimestampFormat, res.Failed(), res.Message())
		}
	}
}
