//go:build multinode

package multinode

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/retentionkit/retention/multinode/harness"
)

// guard bounds every wait of a scenario: a hang fails it instead of the suite. It is
// not a timing assertion; the measured times are reported by printFigures.
const guard = 3 * time.Minute

// scenario is one test's cluster: its database with the fixture tables, its etcd, its
// fleet of nodes and their process manager.
type scenario struct {
	t      *testing.T
	ctx    context.Context
	db     *harness.DB
	etcd   *harness.Etcd
	fleet  *harness.Fleet
	tables []harness.Table
	prefix string // the cluster's etcd key prefix
}

// newScenario resets the database, seeds tables, starts etcd and writes the nodes'
// configuration; no node runs yet.
func newScenario(t *testing.T, tables []harness.Table, c harness.ClusterOptions, p harness.PassOptions) *scenario {
	t.Helper()
	need(t)
	dir := artifacts(t)
	ctx := context.Background()
	dsn := dsnOf(t)
	db, err := harness.OpenDB(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	seeded := time.Now()
	var passes strings.Builder
	for _, tb := range tables {
		if err := db.Seed(ctx, tb); err != nil {
			t.Fatal(err)
		}
		passes.WriteString(harness.PassYAML(tb.Name, p))
	}
	t.Logf("seeded %d tables in %v", len(tables), time.Since(seeded).Round(time.Millisecond))
	etcd, err := harness.StartEtcd(ctx, env.etcd, t.TempDir(), filepath.Join(dir, "etcd.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = etcd.Stop() })
	if c.Name == "" {
		c.Name = "mn-" + strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(t.Name(), "Test")), "/", "-")
	}
	fleet, err := harness.NewFleet(env.bin, dir, etcd, harness.ConfigYAMLFor(db.Driver(), dsn, etcd.Endpoint(), c, passes.String()))
	if err != nil {
		t.Fatal(err)
	}
	if db.MySQL {
		// Each node its own MySQL user, the batch log's way of telling members apart.
		fleet.ConfigFor = func(name string) string {
			return harness.ConfigYAMLFor(db.Driver(), db.NodeDSN(name), etcd.Endpoint(), c, passes.String())
		}
		fleet.Book = db
	}
	s := &scenario{t: t, ctx: ctx, db: db, etcd: etcd, fleet: fleet, tables: tables, prefix: harness.EtcdPrefix(c.Name)}
	// Every process is killed whatever the outcome; its log is in the artifacts. The
	// nodes' last lines are logged by a wait that fails (eventually), before its
	// message, so a failure's reason ends the output, where a truncated CI log shows it.
	t.Cleanup(fleet.Kill)
	return s
}

// start starts n nodes, waits until they form one cluster, and runs the process
// manager until the scenario ends.
func (s *scenario) start(n int) []*harness.Node {
	s.t.Helper()
	ctx, cancel := context.WithCancel(s.ctx)
	s.t.Cleanup(cancel)
	go s.fleet.Supervise(ctx)
	nodes, err := s.fleet.StartN(s.ctx, n)
	if err != nil {
		s.t.Fatal(err)
	}
	return nodes
}

// names is the pass (and table) names.
func (s *scenario) names() []string {
	var out []string
	for _, tb := range s.tables {
		out = append(out, tb.Name)
	}
	return out
}

// eventually polls cond within bound and fails the scenario when it does not come.
func (s *scenario) eventually(bound time.Duration, what string, cond func() (bool, error)) {
	s.t.Helper()
	if err := harness.Poll(s.ctx, bound, what, cond); err != nil {
		s.t.Logf("last log lines:\n%s", s.fleet.Tail(25))
		s.t.Fatal(err)
	}
}

// deleting waits until every table has had a batch committed.
func (s *scenario) deleting() {
	s.t.Helper()
	s.eventually(guard, "a batch on every table", func() (bool, error) {
		n, err := s.db.Count(s.ctx, `SELECT count(DISTINCT tbl) FROM mn_batches`)
		return int(n) == len(s.tables), err
	})
}

// drained waits until no table has a row the rule deletes.
func (s *scenario) drained(bound time.Duration) {
	s.t.Helper()
	s.eventually(bound, "every table drained", func() (bool, error) {
		for _, tb := range s.tables {
			n, err := s.db.Remaining(s.ctx, tb.Name)
			if err != nil || n > 0 {
				return false, err
			}
		}
		return true, nil
	})
}

// checkKeep checks every table against its keep-set: nothing kept is gone, nothing
// expired is left. It returns the rows deleted in all.
func (s *scenario) checkKeep() int64 {
	s.t.Helper()
	var gone int64
	for _, tb := range s.tables {
		k, err := s.db.Keep(s.ctx, tb.Name)
		if err != nil {
			s.t.Fatal(err)
		}
		if !k.OK() {
			s.t.Errorf("keep-set: %s", k)
		}
		gone += k.Gone
	}
	return gone
}

// checkLedgerCounts checks the ledger recorded each deleted row once: per pass (with
// its helpers), the rows its runs recorded equal the rows its table lost.
func (s *scenario) checkLedgerCounts() {
	s.t.Helper()
	for _, tb := range s.tables {
		k, err := s.db.Keep(s.ctx, tb.Name)
		if err != nil {
			s.t.Fatal(err)
		}
		rows, err := s.db.LedgerRows(s.ctx, tb.Name)
		if err != nil {
			s.t.Fatal(err)
		}
		if rows != k.Gone {
			s.t.Errorf("pass %s: the ledger recorded %d rows deleted, the table lost %d", tb.Name, rows, k.Gone)
		}
	}
}

// checkExclusive checks no two members' batches on one table interleave (batch log)
// and no two runs of one pass that deleted overlap in the ledger; deaths are the
// members killed and when. (checkLocks holds the proof: every batch under its pass's
// one advisory lock.)
func (s *scenario) checkExclusive(deaths map[string]time.Time) {
	s.t.Helper()
	mixed, err := s.db.Interleavings(s.ctx)
	if err != nil {
		s.t.Fatal(err)
	}
	for _, o := range mixed {
		s.t.Errorf("two members deleted from one table at once: %s", o)
	}
	runs, err := s.db.LedgerOverlaps(s.ctx, deaths)
	if err != nil {
		s.t.Fatal(err)
	}
	for _, o := range runs {
		s.t.Errorf("ledger: runs %d (member %s) and %d (member %s) of pass %s overlap and both deleted", o.IDA, o.NodeA, o.IDB, o.NodeB, o.Name)
	}
}

// checkLocks checks every batch ran under its pass's lock (one key per identity,
// identities per table) and a slot, and that the slots granted at any batch never
// exceeded limit. It returns the figures.
func (s *scenario) checkLocks(limit int64, identities int) harness.LockFigures {
	s.t.Helper()
	return s.checkLocksAfterDeaths(limit, identities, nil)
}

// checkLocksAfterDeaths is checkLocks with the members killed (application name ->
// when): their batches that ended after the kill may lack a slot (see
// harness.LockFigures.WithoutSlotAfterDeath), never the pass's lock.
func (s *scenario) checkLocksAfterDeaths(limit int64, identities int, deaths map[string]time.Time) harness.LockFigures {
	s.t.Helper()
	f, err := s.db.LocksAfterDeaths(s.ctx, harness.DefaultLockClasses, deaths)
	if err != nil {
		s.t.Fatal(err)
	}
	if f.WithoutPassLock > 0 || f.WithoutSlot > 0 {
		s.t.Errorf("of %d batches, %d ran without their pass's advisory lock and %d without a cluster-wide slot", f.Batches, f.WithoutPassLock, f.WithoutSlot)
	}
	if f.MaxSlots > limit {
		s.t.Errorf("a batch ran while %d slots were granted, limit %d", f.MaxSlots, limit)
	}
	for _, tb := range s.tables {
		if got := f.PassKeys[tb.Name]; got > identities {
			s.t.Errorf("pass %s's batches ran under %d different pass-lock keys, want at most %d (one per identity)", tb.Name, got, identities)
		}
	}
	return f
}

// checkSamples checks what the sampler saw: no advisory key granted twice, the slots
// and the running DELETEs within limit.
func (s *scenario) checkSamples(f harness.SampleFigures, limit int64) {
	s.t.Helper()
	if f.Samples == 0 {
		s.t.Fatalf("the lock sampler took no sample (%d errors)", f.Errors)
	}
	if f.MaxHolders > 1 {
		s.t.Errorf("pg_locks: an advisory key was granted to %d sessions at once", f.MaxHolders)
	}
	if f.MaxSlots > limit || f.MaxDeletes > limit {
		s.t.Errorf("pg_locks/pg_stat_activity: %d slots granted and %d retention DELETEs running at once, limit %d", f.MaxSlots, f.MaxDeletes, limit)
	}
}

// stopAll sends SIGTERM to every running node and checks each exits 0 and, once all
// have, that the ledger has no run left InProgress: every member that stopped (on
// SIGTERM, or fencing itself) closed its runs, and a killed member's were closed by the
// survivors' recovery.
func (s *scenario) stopAll() {
	s.t.Helper()
	for name, code := range s.fleet.Stop(s.ctx, 60*time.Second) {
		if code != 0 {
			s.t.Errorf("%s exited %d after SIGTERM, want 0", name, code)
		}
	}
	open, err := s.db.Count(s.ctx, `SELECT count(*) FROM retention_metadata WHERE state = 'InProgress'`)
	if err != nil {
		s.t.Fatal(err)
	}
	if open != 0 {
		s.t.Errorf("%d ledger runs left InProgress after every node stopped", open)
	}
}

// busiest is the running node whose sessions committed the last batch on the most
// tables that still have rows to delete (and those tables): the victim whose fault
// moves the most passes mid-drain.
func (s *scenario) busiest() (*harness.Node, []string) {
	s.t.Helper()
	last, err := s.db.LastBatchApp(s.ctx, time.Now())
	if err != nil {
		s.t.Fatal(err)
	}
	var best *harness.Node
	var bestTables []string
	for _, n := range s.fleet.Running() {
		var mine []string
		for tbl, app := range last {
			if app != n.AppName() {
				continue
			}
			if left, err := s.db.Remaining(s.ctx, tbl); err != nil {
				s.t.Fatal(err)
			} else if left > 0 {
				mine = append(mine, tbl)
			}
		}
		if len(mine) > len(bestTables) {
			best, bestTables = n, mine
		}
	}
	if best == nil {
		s.t.Fatal("no running node has committed a batch")
	}
	slices.Sort(bestTables)
	return best, bestTables
}

// takeovers waits until every table in moved has a batch after from by a session other
// than the victim's and returns how long after from each came.
func (s *scenario) takeovers(moved []string, from time.Time, victimApp string, bound time.Duration) map[string]time.Duration {
	s.t.Helper()
	out := map[string]time.Duration{}
	s.eventually(bound, fmt.Sprintf("a batch on each of %v by a survivor", moved), func() (bool, error) {
		for _, tbl := range moved {
			if _, ok := out[tbl]; ok {
				continue
			}
			at, _, ok, err := s.db.FirstBatchAfter(s.ctx, tbl, from, victimApp)
			if err != nil {
				return false, err
			}
			if ok {
				out[tbl] = at.Sub(from)
			}
		}
		return len(out) == len(moved), nil
	})
	return out
}

// tables is n fixture tables named prefix1..prefixN with rows rows(i) each.
func tables(prefix string, n int, rows func(i int) int, slow float64) []harness.Table {
	var out []harness.Table
	for i := 1; i <= n; i++ {
		out = append(out, harness.Table{Name: fmt.Sprintf("%s%d", prefix, i), Rows: rows(i), SlowDelete: slow})
	}
	return out
}

// durations is ds sorted, for a report.
func durations(m map[string]time.Duration) []time.Duration {
	var out []time.Duration
	for _, d := range m {
		out = append(out, d)
	}
	slices.Sort(out)
	return out
}
