package postgres_test

import (
	"context"
	"strings"
	"testing"

	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/passtest"
)

// partitionedDDL is a table range-partitioned by its timestamp, with two partitions.
var partitionedDDL = []string{
	`CREATE TABLE events (id BIGINT NOT NULL, at TIMESTAMPTZ NOT NULL, kind TEXT, PRIMARY KEY (at, id)) PARTITION BY RANGE (at)`,
	`CREATE TABLE events_may PARTITION OF events FOR VALUES FROM ('2026-05-01') TO ('2026-06-01')`,
	`CREATE TABLE events_june PARTITION OF events FOR VALUES FROM ('2026-06-01') TO ('2026-07-01')`,
}

func partitionedSpec() passes.TableSpec {
	return passes.TableSpec{Table: "events", KeyColumns: []string{"at", "id"}, Timestamp: "at", Partitions: &passes.PartitionSpec{}}
}

func execAll(t *testing.T, db *passtest.DB, stmts ...string) {
	t.Helper()
	for _, s := range stmts {
		if _, err := db.ExecContext(context.Background(), s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// Startup refuses every table a whole partition could not be retired from with the
// row path's keep-set, naming the field (partitions) and the reason; a good table
// passes.
func TestPartitionsStartupRefusals(t *testing.T) {
	no := false
	tests := []struct {
		name   string
		ddl    []string
		mutate func(*passes.TableSpec)
		want   string // "" passes
	}{
		{"range by the timestamp", partitionedDDL, nil, ""},
		{"not partitioned", []string{`CREATE TABLE events (id BIGINT NOT NULL, at TIMESTAMPTZ NOT NULL, PRIMARY KEY (at, id))`}, nil,
			"partitions: events is not a partitioned table"},
		{"list partitioned", []string{`CREATE TABLE events (id BIGINT NOT NULL, at TIMESTAMPTZ NOT NULL, kind TEXT NOT NULL, PRIMARY KEY (kind, at, id)) PARTITION BY LIST (kind)`}, nil,
			"partitions: events is partitioned by list, not by range"},
		{"another column", []string{`CREATE TABLE events (id BIGINT NOT NULL, at TIMESTAMPTZ NOT NULL, PRIMARY KEY (at, id)) PARTITION BY RANGE (id)`}, nil,
			"partitions: events is partitioned by (id), not by exactly the pass's timestamp column at"},
		{"two columns", []string{`CREATE TABLE events (id BIGINT NOT NULL, at TIMESTAMPTZ NOT NULL, PRIMARY KEY (at, id)) PARTITION BY RANGE (at, id)`}, nil,
			"partitions: events is partitioned by (at, id), not by exactly"},
		{"an expression", []string{`CREATE TABLE events (id BIGINT NOT NULL, at TIMESTAMP NOT NULL) PARTITION BY RANGE ((at::date))`}, nil,
			"partitions: events is partitioned by (an expression), not by exactly"},
		{"undeclared foreign key", append(partitionedDDL,
			`CREATE TABLE notes (id BIGINT PRIMARY KEY, event_at TIMESTAMPTZ, event_id BIGINT, CONSTRAINT notes_event FOREIGN KEY (event_at, event_id) REFERENCES events (at, id) ON DELETE CASCADE)`), nil,
			"partitions: foreign key notes_event of table notes (event_at, event_id) references events, and children does not declare that table"},
		{"declared foreign key", append(partitionedDDL,
			`CREATE TABLE notes (id BIGINT PRIMARY KEY, event_at TIMESTAMPTZ, event_id BIGINT, CONSTRAINT notes_event FOREIGN KEY (event_at, event_id) REFERENCES events (at, id))`),
			func(s *passes.TableSpec) {
				s.Children = []passes.ChildSpec{{Table: "notes", ForeignKeyColumns: []string{"event_at", "event_id"}}}
			}, ""},
		{"default partition, concurrently", append(partitionedDDL, `CREATE TABLE events_rest PARTITION OF events DEFAULT`), nil,
			"partitions: events has a default partition (events_rest), and PostgreSQL cannot detach a partition concurrently"},
		{"default partition, not concurrently", append(partitionedDDL, `CREATE TABLE events_rest PARTITION OF events DEFAULT`),
			func(s *passes.TableSpec) { s.Partitions.Concurrently = &no }, ""},
		{"delete trigger", append(partitionedDDL,
			`CREATE FUNCTION keep_{schema}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'kept'; END $$`,
			`CREATE TRIGGER keep BEFORE DELETE ON events FOR EACH ROW EXECUTE FUNCTION keep_{schema}()`), nil,
			"partitions: events has the row-level DELETE trigger(s) events.keep, which a retired partition's rows never fire"},
		{"archive schema missing", partitionedDDL, func(s *passes.TableSpec) {
			s.Partitions.Mode, s.Partitions.ArchiveSchema = passes.PartitionArchive, "no_such_archive"
		}, "partitions.archive_schema: schema no_such_archive does not exist"},
		{"publication", append(partitionedDDL, `CREATE PUBLICATION pub_{schema} FOR TABLE events`), nil,
			"partitions: events is in publication pub_"},
		{"publication allowed", append(partitionedDDL, `CREATE PUBLICATION pub_{schema} FOR TABLE events`),
			func(s *passes.TableSpec) { s.Partitions.AllowPublication = true }, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			db := passtest.Postgres(t)
			var schema string
			if err := db.NewRaw("SELECT current_schema()").Scan(context.Background(), &schema); err != nil {
				t.Fatal(err)
			}
			for _, s := range tc.ddl {
				execAll(t, db, strings.ReplaceAll(s, "{schema}", schema))
			}
			t.Cleanup(func() { _, _ = db.ExecContext(context.Background(), "DROP PUBLICATION IF EXISTS pub_"+schema) })
			spec := partitionedSpec()
			if tc.mutate != nil {
				tc.mutate(&spec)
			}
			tbl, err := passes.NewTable(db.DB, "events", spec)
			if err != nil {
				t.Fatal(err)
			}
			res := tbl.ValidateStartup(context.Background())
			switch {
			case tc.want == "" && res.Failed():
				t.Fatalf("refused: %s", res.Message())
			case tc.want != "" && (!res.Failed() || !strings.Contains(res.Message(), tc.want) || !strings.Contains(res.Message(), `pass "events"`)):
				t.Fatalf("result failed=%v %q, want a refusal naming the pass and saying %q", res.Failed(), res.Message(), tc.want)
			}
		})
	}
}
