package node_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"
	"github.com/sirupsen/logrus"
	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/core/pacing"
	"github.com/retentionkit/retention/node"
	"github.com/retentionkit/retention/node/config"
	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/dbtest"
)

// TestAdaptivePassPacedByItsReplicas runs a node on a real MariaDB source whose
// replica database.replicas lists, with an adaptive pass over 20,000 expired rows:
//
//   - the replica's SQL thread stopped before the node starts (its lag NULL), the pass
//     says it waits for the replica and deletes nothing for three seconds;
//   - the thread started again, the pass deletes;
//   - the replica applying each change 3 s late (over max_replica_lag: 1s), the pass
//     backs off for the replica's lag;
//
// and the rows not yet expired are all kept.
func TestAdaptivePassPacedByItsReplicas(t *testing.T) {
	r := dbtest.MySQLReplication(t)
	ctx := t.Context()
	src, rep := openMySQL(t, r.SourceDSN), openMySQL(t, r.ReplicaDSN)
	const expired, fresh = 20000, 10
	for _, q := range []string{
		"CREATE TABLE events (id BIGINT AUTO_INCREMENT PRIMARY KEY, at TIMESTAMP(6) NOT NULL, KEY (at))",
		fmt.Sprintf(`INSERT INTO events (at) WITH RECURSIVE n (i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200)
			SELECT UTC_TIMESTAMP(6) - INTERVAL 2 DAY FROM n a, n b LIMIT %d`, expired),
		fmt.Sprintf(`INSERT INTO events (at) WITH RECURSIVE n (i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200)
			SELECT UTC_TIMESTAMP(6) + INTERVAL 1 DAY FROM n LIMIT %d`, fresh),
	} {
		if _, err := src.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	count := func(where string) int {
		t.Helper()
		var n int
		if err := src.QueryRowContext(ctx, "SELECT COUNT(*) FROM events WHERE "+where).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	r.WaitFor(t, "the rows on the replica", func() bool {
		var n int
		err := rep.QueryRowContext(ctx, "SELECT COUNT(*) FROM events").Scan(&n)
		return err == nil && n == expired+fresh
	})
	r.StopApplying(t)

	events := make(chan actors.Event, 4096)
	watch := actors.ObserverFunc(func(e actors.Event) error {
		switch e.(type) {
		case actors.PaceChanged, actors.BatchDone:
			select {
			case events <- e:
			default:
			}
		}
		return nil
	})
	n, err := node.Open(ctx, replicaConfig(t, r), node.Options{Observers: []actors.Observer{watch}})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if err := n.Start(ctx); err != nil {
		t.Fatal(err)
	}
	bound := time.After(time.Minute) // a bound on a hang
	next := func(what string, want func(actors.Event) bool) actors.Event {
		t.Helper()
		for {
			select {
			case e := <-events:
				if want(e) {
					return e
				}
				if b, ok := e.(actors.BatchDone); ok && what == "" {
					t.Fatalf("a batch of %d rows while the replica was not replicating", b.Rows)
				}
			case <-bound:
				t.Fatalf("no %s within a minute", what)
			}
		}
	}
	waiting := next("wait for the replica", func(e actors.Event) bool {
		c, ok := e.(actors.PaceChanged)
		return ok && c.Reason == pacing.ReasonReplicaLag && strings.HasPrefix(c.Detail, "waiting: ")
	}).(actors.PaceChanged)
	if !strings.Contains(waiting.Detail, "not replicating") || !strings.Contains(waiting.Detail, "replica retention_repl@tcp(") {
		t.Errorf("the wait says %q; want it to name the replica and say it is not replicating", waiting.Detail)
	}
	t.Logf("waiting: %s", waiting.Detail)
	// Three seconds with the replica stopped: no batch (next fails on one).
	quiet := time.After(3 * time.Second)
	select {
	case e := <-events:
		if b, ok := e.(actors.BatchDone); ok {
			t.Fatalf("a batch of %d rows while the replica was not replicating", b.Rows)
		}
	case <-quiet:
	}
	if left := count("at < UTC_TIMESTAMP(6)"); left != expired {
		t.Fatalf("%d expired rows left while the replica was stopped, want all %d", left, expired)
	}
	srv := httptest.NewServer(n.Handler())
	defer srv.Close()
	if body := get(t, srv.URL+"/passes"); !strings.Contains(body, `"waiting_for_replica":"pass \"events\": replica retention_repl@tcp(`) {
		t.Errorf("GET /passes does not show the wait for the replica:\n%s", body)
	}
	r.StartApplying(t)
	next("a batch once the replica applies again", func(e actors.Event) bool {
		b, ok := e.(actors.BatchDone)
		return ok && b.Rows > 0
	})
	r.Delay(t, 3*time.Second)
	backoff := next("a back-off for the replica's lag", func(e actors.Event) bool {
		c, ok := e.(actors.PaceChanged)
		return ok && c.Reason == pacing.ReasonReplicaLag && strings.Contains(c.Detail, "over 1s")
	}).(actors.PaceChanged)
	t.Logf("backing off: %s (batch %d, rate %.0f rows/s)", backoff.Detail, backoff.Batch, backoff.Rate)
	if err := n.Stop(context.WithoutCancel(ctx)); err != nil {
		t.Fatal(err)
	}
	if kept := count("at > UTC_TIMESTAMP(6)"); kept != fresh {
		t.Errorf("%d rows not yet expired are left, want all %d", kept, fresh)
	}
	// The deletes replicated by row: once the replica has applied them, it keeps
	// exactly the rows the source keeps.
	want := ids(t, src)
	r.WaitFor(t, "the replica applying the deletes", func() bool { return len(ids(t, rep)) == len(want) })
	if got := ids(t, rep); !slices.Equal(got, want) {
		t.Errorf("the replica keeps %d rows, the source %d; their keys differ", len(got), len(want))
	}
}

// ids are the keys of the events table, in order.
func ids(t *testing.T, db *bun.DB) []int64 {
	t.Helper()
	var out []int64
	if err := db.NewRaw("SELECT id FROM events ORDER BY id").Scan(t.Context(), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func openMySQL(t *testing.T, dsn string) *bun.DB {
	t.Helper()
	db, err := passes.Open(t.Context(), passes.DriverMySQL, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// replicaConfig is a node's file for the source and its replica: one adaptive pass.
func replicaConfig(t *testing.T, r *dbtest.Replication) *config.Config {
	t.Helper()
	return mysqlEventsConfig(t, r.SourceDSN, fmt.Sprintf("  replicas:\n    - %q\n", r.ReplicaDSN),
		"    pacing: adaptive\n    max_replica_lag: 1s\n")
}

// mysqlEventsConfig is a node's file for one pass over the table events of the MySQL
// database dsn names: dbExtra goes under database:, passExtra under the pass.
func mysqlEventsConfig(t *testing.T, dsn, dbExtra, passExtra string) *config.Config {
	t.Helper()
	return configFile(t, t.TempDir(), fmt.Sprintf("database:\n  driver: mysql\n  dsn: %q\n%spasses:\n  - name: events\n"+
		"    table: events\n    key: id\n    timestamp: at\n    retention_period: 1h\n    max_startup_stagger: 0s\n%s", dsn, dbExtra, passExtra))
}

// TestReplicaThatIsNoReplicaRefused: a replica entry naming a server that replicates
// from nothing (here the source, spelled differently) is a configuration error with its
// line, and one that does not answer is not (exit 1); neither message shows a password.
func TestReplicaThatIsNoReplicaRefused(t *testing.T) {
	r := dbtest.MySQLReplication(t)
	sep := "?"
	if strings.Contains(r.SourceDSN, "?") {
		sep = "&"
	}
	for _, tc := range []struct {
		name, replica, want string
		config              bool
	}{
		{"the source", r.SourceDSN + sep + "timeout=5s", "line 5: database.replicas[0]: replica ", true},
		{"nothing there", "retention_repl:s3cret@tcp(127.0.0.1:1)/x", "line 5: database.replicas[0] retention_repl:xxxxx@tcp(127.0.0.1:1)/x", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := replicaConfig(t, r)
			cfg.Database.Replicas = []string{tc.replica}
			_, err := node.OpenTables(t.Context(), cfg, node.TablesOptions{})
			var ce *node.ConfigError
			if err == nil || !strings.Contains(err.Error(), tc.want) || errors.As(err, &ce) != tc.config || strings.Contains(err.Error(), "s3cret") {
				t.Fatalf("OpenTables: %v (a config error: %v); want %q, a config error %v, no password", err, errors.As(err, &ce), tc.want, tc.config)
			}
		})
	}
}

// TestStartupWarnsOfAPaceSignalItCannotRead: the node's user lacks the PROCESS
// privilege, so the sessions an adaptive pass's sweep blocks cannot be counted; the
// startup checks pass and warn of it, and say nothing for a fixed pass, which reads no
// such signal.
func TestStartupWarnsOfAPaceSignalItCannotRead(t *testing.T) {
	r := dbtest.MySQLReplication(t)
	ctx := t.Context()
	src := openMySQL(t, r.SourceDSN)
	user := fmt.Sprintf("rt_noproc_%d", time.Now().UnixNano()%1_000_000_000)
	var name string
	if err := src.QueryRowContext(ctx, "SELECT DATABASE()").Scan(&name); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"CREATE USER " + user + "@'127.0.0.1'",
		"GRANT ALL ON `" + name + "`.* TO " + user + "@'127.0.0.1'",
		"CREATE TABLE events (id BIGINT AUTO_INCREMENT PRIMARY KEY, at TIMESTAMP(6) NOT NULL, KEY (at))",
	} {
		if _, err := src.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	t.Cleanup(func() { _, _ = src.ExecContext(context.Background(), "DROP USER IF EXISTS "+user+"@'127.0.0.1'") })
	as, err := gomysql.ParseDSN(r.SourceDSN)
	if err != nil {
		t.Fatal(err)
	}
	as.User, as.Passwd = user, ""
	dsn := as.FormatDSN()
	for _, pacing := range []string{"adaptive", "fixed"} {
		t.Run(pacing, func(t *testing.T) {
			cfg := mysqlEventsConfig(t, dsn, "", "    pacing: "+pacing+"\n")
			var logged strings.Builder
			log := logrus.New()
			log.SetOutput(&logged)
			tables, err := node.OpenTables(ctx, cfg, node.TablesOptions{Logger: log})
			if err != nil {
				t.Fatal(err)
			}
			defer tables.Close()
			if err := node.CheckStartup(ctx, log, tables.Passes, nil, node.StartupOptions{}); err != nil {
				t.Fatal(err)
			}
			warned := strings.Contains(logged.String(), "the sessions the sweep blocks cannot be counted")
			if want := pacing == "adaptive"; warned != want || want && !strings.Contains(logged.String(), "PROCESS") {
				t.Errorf("a %s pass: warned %v, want %v; the log:\n%s", pacing, warned, want, logged.String())
			}
		})
	}
}
