package metrics

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/dbtest"
)

// TestVacuumCollectorReportsDeadRows: on a real PostgreSQL table, the dead rows a delete
// left show once the statistics have them, and a table never autovacuumed reads 0.
func TestVacuumCollectorReportsDeadRows(t *testing.T) {
	ctx := context.Background()
	db := dbtest.Postgres(t)
	name := fmt.Sprintf("vac%08x", rand.Uint32())
	for _, q := range []string{
		"CREATE TABLE " + name + " (id BIGINT PRIMARY KEY, ts TIMESTAMPTZ NOT NULL) WITH (autovacuum_enabled = false)",
		"INSERT INTO " + name + " SELECT i, now() FROM generate_series(1, 300) AS i",
		"DELETE FROM " + name + " WHERE id <= 120",
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _, _ = db.ExecContext(context.Background(), "DROP TABLE "+name) })
	tbl, err := passes.NewTable(db, "vac", passes.TableSpec{Table: name, Key: "id", Timestamp: "ts"})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second) // the statistics arrive within about a second
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		c := NewVacuumCollector([]Table{{Table: tbl}})
		got := gather(t, c)
		if got["retention_table_dead_tuples"] >= 120 {
			if got["retention_table_last_autovacuum_timestamp_seconds"] != 0 || got["retention_table_last_analyze_timestamp_seconds"] != 0 {
				t.Fatalf("samples %v: never vacuumed or analyzed reads 0", got)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("samples %v after 30s", got)
		}
		<-tick.C
	}
}

func gather(t *testing.T, c prometheus.Collector) map[string]float64 {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			out[mf.GetName()] = m.GetGauge().GetValue()
		}
	}
	return out
}
