package postgres_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/passtest"
)

// batchDeletes keeps the deletes from table events a table sends, as the database
// received them.
type batchDeletes struct {
	mu      sync.Mutex
	queries []string
}

func (c *batchDeletes) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context {
	return ctx
}

func (c *batchDeletes) AfterQuery(_ context.Context, e *bun.QueryEvent) {
	if strings.Contains(e.Query, `DELETE FROM "events"`) {
		c.mu.Lock()
		c.queries = append(c.queries, e.Query)
		c.mu.Unlock()
	}
}

// planNode is the part of EXPLAIN (FORMAT JSON)'s nodes the plan check reads.
type planNode struct {
	NodeType     string     `json:"Node Type"`
	Operation    string     `json:"Operation"`
	Relationship string     `json:"Parent Relationship"`
	Relation     string     `json:"Relation Name"`
	Loops        int        `json:"Actual Loops"`
	Plans        []planNode `json:"Plans"`
}

// TestPartitionedBatchDeleteReadsOnlyCandidatesPartitions: a batch's delete on a table
// partitioned by the timestamp, with key (at, id), reads only the partition its
// candidates are in (issue 25). The statement that joined the candidates to every
// partition (a hash semi join over a scan of each) took 686 ms a batch on 30
// partitions, and nothing but its plan tells it apart: the rows deleted are the same.
// So the check is on the plan, run as the table sends it (EXPLAIN ANALYZE, rolled
// back): under the delete, a scan of any other partition never runs. That is the
// executor's pruning by the candidates' least and greatest timestamps, which does not
// depend on row estimates or costs, so it holds at the test's size as at production's.
func TestPartitionedBatchDeleteReadsOnlyCandidatesPartitions(t *testing.T) {
	db := passtest.Postgres(t)
	ctx := context.Background()
	day0 := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	stmts := []string{`CREATE TABLE events (id BIGINT NOT NULL, at TIMESTAMPTZ NOT NULL, PRIMARY KEY (at, id)) PARTITION BY RANGE (at)`}
	for d, name := range []string{"events_d0", "events_d1", "events_d2", "events_d3"} {
		from, to := day0.AddDate(0, 0, d), day0.AddDate(0, 0, d+1)
		stmts = append(stmts, "CREATE TABLE "+name+" PARTITION OF events FOR VALUES FROM ('"+from.Format(time.RFC3339)+"') TO ('"+to.Format(time.RFC3339)+"')")
	}
	stmts = append(stmts, `CREATE INDEX events_at ON events (at)`)
	// 2,000 rows a day, one every 43.2 s from day0; the cutoff, day0 + 2h, leaves 167
	// expired, so the first batch of 100 is day0's oldest.
	const fill = `INSERT INTO events (id, at) SELECT g, TIMESTAMPTZ '2026-05-01 00:00:00+00' + g * INTERVAL '43.2 seconds' FROM generate_series(0, 7999) g`
	stmts = append(stmts, fill, `ANALYZE events`)
	for _, s := range stmts {
		if _, err := db.ExecContext(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	hook := &batchDeletes{}
	tbl, err := passes.NewTable(db.DB.WithQueryHook(hook), "events", passes.TableSpec{Table: "events", KeyColumns: []string{"at", "id"}, Timestamp: "at"})
	if err != nil {
		t.Fatal(err)
	}
	if res := passtest.Sweep(t, tbl, 100, day0.Add(2*time.Hour)); res.Deleted != 167 {
		t.Fatalf("the sweep deleted %d rows, want the 167 expired ones", res.Deleted)
	}
	hook.mu.Lock()
	if len(hook.queries) == 0 {
		hook.mu.Unlock()
		t.Fatal("the sweep sent no batch delete")
	}
	first := hook.queries[0]
	hook.mu.Unlock()

	// The same rows again, so the first batch's statement finds the same candidates.
	for _, s := range []string{`TRUNCATE events`, fill, `ANALYZE events`} {
		if _, err := db.ExecContext(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	var out string
	if err := tx.QueryRowContext(ctx, "EXPLAIN (ANALYZE, FORMAT JSON) "+first).Scan(&out); err != nil {
		t.Fatalf("explain %s: %v", first, err)
	}
	var plans []struct {
		Plan planNode `json:"Plan"`
	}
	if err := json.Unmarshal([]byte(out), &plans); err != nil || len(plans) != 1 {
		t.Fatalf("read the plan: %v (%d plans)", err, len(plans))
	}
	del := findDelete(plans[0].Plan)
	if del == nil {
		t.Fatalf("no Delete node in the plan:\n%s", out)
	}
	read := map[string]bool{}
	for _, p := range del.Plans {
		// InitPlans and SubPlans read the candidates; the delete's own scan is the rest.
		if p.Relationship != "InitPlan" && p.Relationship != "SubPlan" {
			partitionsRead(p, read)
		}
	}
	if !read["events_d0"] {
		t.Errorf("the delete did not read events_d0, the candidates' partition:\n%s", out)
	}
	for name := range read {
		if name != "events_d0" {
			t.Errorf("the delete read partition %s, which holds none of the candidates (issue 25: a scan of every partition):\n%s", name, out)
		}
	}
}

// findDelete is the ModifyTable node that deletes, at or under n.
func findDelete(n planNode) *planNode {
	if n.NodeType == "ModifyTable" && n.Operation == "Delete" {
		return &n
	}
	for _, c := range n.Plans {
		if d := findDelete(c); d != nil {
			return d
		}
	}
	return nil
}

// partitionsRead adds to read the relations a node at or under n scanned at least once.
func partitionsRead(n planNode, read map[string]bool) {
	if n.Relation != "" && n.Loops > 0 {
		read[n.Relation] = true
	}
	for _, c := range n.Plans {
		partitionsRead(c, read)
	}
}
