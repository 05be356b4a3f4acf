package passtest

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/ledger"
)

// cleanupBehaviours: the ledger's metadata cleanup deletes only terminal runs of the
// names it lists, each group at its own cutoff (an override moving only the default
// group), keeps the runs a child, queued work, a dead letter or another table still
// needs, lets its groups take turns, ends a cycle only with nothing eligible left, runs
// beside another cleanup, and merges the aliases of one pass the startup check did not
// see. The plan's configuration rules need no database: passes/ledger tests them.
func cleanupBehaviours() []behaviour {
	return []behaviour{
		{name: "only terminal runs of listed names past their retention go", run: cleanupEligibility},
		{name: "each group takes its own cutoff", run: cleanupGroupCutoffs},
		{name: "runs a child or a dead letter needs stay", run: cleanupKeepsReferenced},
		{name: "a run another table references is skipped alone", run: cleanupOutsideReference},
		{name: "two cleanups at once", run: twoCleanupsAtOnce},
		{name: "an override moves only the default group", run: cleanupOverride},
		{name: "an own retention equal to the default stays put", run: ownRetentionStaysPut},
		{name: "groups take turns", run: groupsTakeTurns},
		{name: "a cycle ends only when nothing is left", run: cycleEndsWhenNothingLeft},
		{name: "two cycles at once each end with nothing left", run: twoCyclesEndEmpty},
		{name: "the sweep merges aliases the startup check did not see", run: sweepMergesAliases},
	}
}

// cleanupBook is a migrated ledger on the behaviour's database, with helpers to write
// its rows directly.
type cleanupBook struct {
	t   *testing.T
	db  *DB
	l   *ledger.Ledger
	ids int64
}

func newCleanupBook(t *testing.T, db *DB) *cleanupBook {
	t.Helper()
	return &cleanupBook{t: t, db: db, l: migratedLedger(t, db)}
}

// retainFor is d as a NameRetention's own retention.
func retainFor(d time.Duration) *time.Duration { return &d }

func (b *cleanupBook) exec(q string, args ...any) {
	b.t.Helper()
	if _, err := b.db.ExecContext(context.Background(), strings.ReplaceAll(q, "{p}", ledgerPrefix), args...); err != nil {
		b.t.Fatalf("%s: %v", q, err)
	}
}

// run inserts a metadata row that started age ago and returns its id.
func (b *cleanupBook) run(name string, state ledger.State, age time.Duration) int64 {
	b.ids++
	b.exec("INSERT INTO {p}metadata (id, name, state, start_time) VALUES (?, ?, ?, ?)", b.ids, name, state, ledgerNow.Add(-age))
	return b.ids
}

func (b *cleanupBook) left() []int64 {
	var ids []int64
	if err := b.db.NewSelect().TableExpr(ledgerPrefix+"metadata").Column("id").Order("id").Scan(context.Background(), &ids); err != nil {
		b.t.Fatal(err)
	}
	return ids
}

type cleanupSkips struct{ keys []any }

func (s *cleanupSkips) RowSkipped(key any, _ error) { s.keys = append(s.keys, key) }
func (s *cleanupSkips) MoreWaiting()                {}

// sweep runs one cleanup sweep at ledgerNow the way the runtime does, batch by batch.
func (b *cleanupBook) sweep(plan *ledger.Plan) []any {
	b.t.Helper()
	c := ledger.NewCleanup(b.l, plan)
	p, _ := c.Factory()(context.Background())
	r := &cleanupSkips{}
	reporter := &moreReporter{cleanupSkips: r}
	ctx := passes.WithBatchReporter(context.Background(), reporter)
	for i := 0; ; i++ {
		reporter.more = false
		n, err := p.PurgeBatch(ctx, plan.BatchSize, ledgerNow.Add(-plan.Retention))
		if err != nil {
			b.t.Fatalf("cleanup batch: %v", err)
		}
		if n+reporter.batchSkips < plan.BatchSize && !reporter.more {
			return r.keys
		}
		reporter.batchSkips = 0
		if i > 1000 {
			b.t.Fatal("the cleanup does not end")
		}
	}
}

type moreReporter struct {
	*cleanupSkips
	more       bool
	batchSkips int
}

func (m *moreReporter) RowSkipped(key any, err error) {
	m.batchSkips++
	m.cleanupSkips.RowSkipped(key, err)
}
func (m *moreReporter) MoreWaiting() { m.more = true }

func cleanupPlan(t *testing.T, c ledger.CleanupConfig) *ledger.Plan {
	t.Helper()
	p, err := c.Build()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// cycle is one cleanup sweep driven batch by batch as the runtime drives it: it goes on
// while a batch came back full (deleted + skipped) or asked for more.
type cycle struct {
	t    *testing.T
	pass passes.Pass
	size int
	at   time.Time
}

func newCycle(t *testing.T, c *ledger.Cleanup, p *ledger.Plan) *cycle {
	t.Helper()
	pass, err := c.Factory()(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return &cycle{t: t, pass: pass, size: p.BatchSize, at: ledgerNow.Add(-p.Retention)}
}

// batch runs one batch and reports what it deleted and whether the runtime would go on.
func (c *cycle) batch(ctx context.Context) (deleted int, goOn bool, err error) {
	r := &moreReporter{cleanupSkips: &cleanupSkips{}}
	n, err := c.pass.PurgeBatch(passes.WithBatchReporter(ctx, r), c.size, c.at)
	return n, n+r.batchSkips == c.size || r.more, err
}

// run runs batches until the runtime would stop, and returns how many ran.
func (c *cycle) run() int {
	c.t.Helper()
	for i := 1; ; i++ {
		_, goOn, err := c.batch(context.Background())
		if err != nil {
			c.t.Errorf("cleanup batch: %v", err)
			return i
		}
		if !goOn {
			return i
		}
		if i > 10000 {
			c.t.Error("the cleanup cycle does not end")
			return i
		}
	}
}

// eligibleLeft counts the terminal runs of name older than age.
func (b *cleanupBook) eligibleLeft(name string, age time.Duration) int {
	b.t.Helper()
	n, err := b.db.NewSelect().TableExpr(ledgerPrefix+"metadata").Where("name = ?", name).
		Where("state IN (?)", bun.List([]ledger.State{ledger.Completed, ledger.Failed, ledger.Cancelled})).
		Where("start_time < ?", ledgerNow.Add(-age)).Count(context.Background())
	if err != nil {
		b.t.Fatal(err)
	}
	return int(n)
}

func cleanupEligibility(t *testing.T, db *DB) {
	b := newCleanupBook(t, db)
	internal := ledger.NameWorkQueuePoller
	old, young := 2*time.Hour, 10*time.Minute
	gone := []int64{
		b.run(internal, ledger.Completed, old),
		b.run(internal, ledger.Failed, old),
		b.run(internal, ledger.Cancelled, old),
		b.run("nightly-import", ledger.Completed, old), // listed, default retention
	}
	kept := []int64{
		b.run(internal, ledger.Pending, 100*24*time.Hour),    // never, whatever its age
		b.run(internal, ledger.InProgress, 100*24*time.Hour), // never
		b.run(internal, ledger.Completed, young),             // too young
		b.run("audit-log", ledger.Completed, old),            // not listed: never
		b.run("customer-patch", ledger.Completed, old),       // its own 30d retention
	}
	queued := b.run(internal, ledger.Completed, old) // queued work still needs it
	b.exec("INSERT INTO {p}work_queue (pass_name, requested_time, state, metadata_id) VALUES ('x', ?, 'Queued', ?)", ledgerNow, queued)
	done := b.run(internal, ledger.Completed, old) // finished work goes with its run
	b.exec("INSERT INTO {p}work_queue (pass_name, requested_time, state, metadata_id) VALUES ('x', ?, 'Done', ?)", ledgerNow, done)
	b.exec("INSERT INTO {p}log (metadata_id, level, time, message) VALUES (?, 'info', ?, 'm')", done, ledgerNow)
	kept, gone = append(kept, queued), append(gone, done)

	b.sweep(cleanupPlan(t, ledger.CleanupConfig{Names: []ledger.NameRetention{
		{Name: "nightly-import"}, {Name: "customer-patch", Retention: retainFor(30 * 24 * time.Hour)},
	}}))
	slices.Sort(kept)
	if got := b.left(); !slices.Equal(got, kept) {
		t.Fatalf("left %v, want %v (gone: %v)", got, kept, gone)
	}
}

func cleanupGroupCutoffs(t *testing.T, db *DB) {
	b := newCleanupBook(t, db)
	fast := b.run("delta-import", ledger.Completed, 20*time.Minute)            // 10m retention: gone
	slow := b.run("customer-patch", ledger.Completed, 20*24*time.Hour)         // 30d: kept
	slowOld := b.run("customer-patch", ledger.Completed, 31*24*time.Hour)      // 30d: gone
	def := b.run(ledger.NameMetadataCleanup, ledger.Completed, 20*time.Minute) // default 30m: kept
	b.sweep(cleanupPlan(t, ledger.CleanupConfig{Names: []ledger.NameRetention{
		{Name: "delta-import", Retention: retainFor(10 * time.Minute)},
		{Name: "customer-patch", Retention: retainFor(30 * 24 * time.Hour)},
	}}))
	if got, want := b.left(), []int64{slow, def}; !slices.Equal(got, want) {
		t.Fatalf("left %v, want %v (gone %v, %v)", got, want, fast, slowOld)
	}
}

func cleanupKeepsReferenced(t *testing.T, db *DB) {
	b := newCleanupBook(t, db)
	name := ledger.NameWorkQueuePoller
	parent := b.run(name, ledger.Completed, time.Hour)
	child := b.run("audit-log", ledger.InProgress, time.Hour) // unlisted and running: kept
	b.exec("UPDATE {p}metadata SET parent_id = ? WHERE id = ?", parent, child)
	failedRun := b.run("audit-log", ledger.Failed, time.Hour)
	retryRun := b.run(name, ledger.Completed, time.Hour)
	b.exec("INSERT INTO {p}dead_letter (pass_name, error, created_time, metadata_id, retry_metadata_id) VALUES ('audit-log', 'boom', ?, ?, ?)", ledgerNow, failedRun, retryRun)
	b.sweep(cleanupPlan(t, ledger.CleanupConfig{}))
	if got, want := b.left(), []int64{child, failedRun}; !slices.Equal(got, want) {
		t.Fatalf("left %v, want %v", got, want)
	}
	var parentRef, retryRef []*int64
	_ = db.NewSelect().TableExpr(ledgerPrefix+"metadata").Column("parent_id").Where("id = ?", child).Scan(context.Background(), &parentRef)
	_ = db.NewSelect().TableExpr(ledgerPrefix+"dead_letter").Column("retry_metadata_id").Scan(context.Background(), &retryRef)
	if len(parentRef) != 1 || (parentRef[0] != nil && *parentRef[0] != 0) || len(retryRef) != 1 || (retryRef[0] != nil && *retryRef[0] != 0) {
		t.Fatalf("references left: parent %v, retry %v", parentRef, retryRef)
	}
}

func cleanupOutsideReference(t *testing.T, db *DB) {
	b := newCleanupBook(t, db)
	var ids []int64
	for range 9 {
		ids = append(ids, b.run(ledger.NameWorkQueuePoller, ledger.Completed, time.Hour))
	}
	b.exec("CREATE TABLE {p}audit_ref (id INTEGER PRIMARY KEY, run_id BIGINT NOT NULL REFERENCES {p}metadata (id))")
	b.t.Cleanup(func() { _, _ = db.ExecContext(context.Background(), "DROP TABLE "+ledgerPrefix+"audit_ref") })
	b.exec("INSERT INTO {p}audit_ref (id, run_id) VALUES (1, ?)", ids[4])
	skipped := b.sweep(cleanupPlan(t, ledger.CleanupConfig{DeleteBatchSize: 4}))
	if got := b.left(); !slices.Equal(got, []int64{ids[4]}) {
		t.Fatalf("left %v, want only the referenced run %d", got, ids[4])
	}
	if len(skipped) != 1 {
		t.Fatalf("skipped %v", skipped)
	}
}

func twoCleanupsAtOnce(t *testing.T, db *DB) {
	b := newCleanupBook(t, db)
	for i := range 300 {
		state := []ledger.State{ledger.Completed, ledger.Failed, ledger.InProgress}[i%3]
		b.run(ledger.NameWorkQueuePoller, state, time.Hour)
	}
	p := cleanupPlan(t, ledger.CleanupConfig{DeleteBatchSize: 25})
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() { b.sweep(p) })
	}
	wg.Wait()
	if got := len(b.left()); got != 100 {
		t.Fatalf("%d runs left, want the 100 in progress", got)
	}
}

func cleanupOverride(t *testing.T, db *DB) {
	b := newCleanupBook(t, db)
	def := b.run(ledger.NameMetadataCleanup, ledger.Completed, 90*time.Minute)
	own := b.run("customer-patch", ledger.Completed, 90*time.Minute)
	p := cleanupPlan(t, ledger.CleanupConfig{Names: []ledger.NameRetention{{Name: "customer-patch", Retention: retainFor(time.Hour)}}})
	// Another node stores the override; this one sees it through the database.
	other, _ := ledger.New(db.DB, ledgerPrefix)
	if err := other.SetCleanupRetention(context.Background(), 2*time.Hour, ledgerNow); err != nil {
		t.Fatal(err)
	}
	if d, err := b.l.CleanupRetentionOverride(context.Background()); err != nil || d != 2*time.Hour {
		t.Fatalf("override read back = %v, %v", d, err)
	}
	b.sweep(p)
	if got, want := b.left(), []int64{def}; !slices.Equal(got, want) {
		t.Fatalf("left %v, want %v: the override (2h) keeps the default group's 90m-old run, the 1h group loses %d", got, want, own)
	}
}

// ownRetentionStaysPut: a name given its own retention stays
// where it was when the default is overridden, even when that retention equals the
// default; a name on the default moves with the override.
func ownRetentionStaysPut(t *testing.T, db *DB) {
	b := newCleanupBook(t, db)
	onDefault := b.run("nightly-import", ledger.Completed, 45*time.Minute)
	own := b.run("customer-patch", ledger.Completed, 45*time.Minute)
	p := cleanupPlan(t, ledger.CleanupConfig{Names: []ledger.NameRetention{
		{Name: "nightly-import"},
		{Name: "customer-patch", Retention: retainFor(ledger.DefaultCleanupRetention)},
	}})
	if err := b.l.SetCleanupRetention(context.Background(), time.Hour, ledgerNow); err != nil {
		t.Fatal(err)
	}
	b.sweep(p)
	if got, want := b.left(), []int64{onDefault}; !slices.Equal(got, want) {
		t.Fatalf("left %v, want %v: the 1h override keeps the default's 45m-old run, and customer-patch keeps its own 30m (run %d goes)", got, want, own)
	}
}

// groupsTakeTurns: the default group has many eligible runs, a second group a few;
// the second group's runs go in the cycle's second batch, not after the first group.
func groupsTakeTurns(t *testing.T, db *DB) {
	b := newCleanupBook(t, db)
	for range 40 {
		b.run(ledger.NameWorkQueuePoller, ledger.Completed, time.Hour)
	}
	for range 3 {
		b.run("customer-patch", ledger.Completed, 3*time.Hour)
	}
	p := cleanupPlan(t, ledger.CleanupConfig{DeleteBatchSize: 5, Names: []ledger.NameRetention{{Name: "customer-patch", Retention: retainFor(2 * time.Hour)}}})
	c := newCycle(t, ledger.NewCleanup(b.l, p), p)
	for range 2 {
		if _, goOn, err := c.batch(context.Background()); err != nil || !goOn {
			t.Fatalf("batch: go on %v, %v", goOn, err)
		}
	}
	if left := b.eligibleLeft("customer-patch", 2*time.Hour); left != 0 {
		t.Fatalf("after two batches %d customer-patch runs are left: the default group took every turn", left)
	}
	if batches := c.run(); b.eligibleLeft(ledger.NameWorkQueuePoller, 30*time.Minute) != 0 {
		t.Fatalf("the cycle ended after %d more batches with runs left", batches)
	}
}

// cycleEndsWhenNothingLeft: with more eligible runs than the pass defaults'
// 100 batches can take, one cycle still deletes them all, in every group.
func cycleEndsWhenNothingLeft(t *testing.T, db *DB) {
	b := newCleanupBook(t, db)
	for i := range 130 {
		b.run(ledger.NameWorkQueuePoller, ledger.Completed, time.Hour)
		if i%10 == 0 {
			b.run("customer-patch", ledger.Failed, 3*time.Hour)
		}
	}
	p := cleanupPlan(t, ledger.CleanupConfig{DeleteBatchSize: 1, Names: []ledger.NameRetention{{Name: "customer-patch", Retention: retainFor(2 * time.Hour)}}})
	reg := ledger.NewCleanup(b.l, p).Registration()
	if reg.Options.MaxBatchesPerSweep <= 143 {
		t.Fatalf("the cleanup's sweep stops after %d batches", reg.Options.MaxBatchesPerSweep)
	}
	newCycle(t, ledger.NewCleanup(b.l, p), p).run()
	if left := len(b.left()); left != 0 {
		t.Fatalf("%d runs left after one cycle", left)
	}
}

// twoCyclesEndEmpty runs two cycles at once: whichever ends first,
// nothing eligible is left when it does.
func twoCyclesEndEmpty(t *testing.T, db *DB) {
	b := newCleanupBook(t, db)
	for i := range 600 {
		state := []ledger.State{ledger.Completed, ledger.Failed, ledger.InProgress}[i%3]
		b.run(ledger.NameWorkQueuePoller, state, time.Hour)
	}
	p := cleanupPlan(t, ledger.CleanupConfig{DeleteBatchSize: 10})
	var wg sync.WaitGroup
	left := make(chan int, 2)
	for range 2 {
		c := newCycle(t, ledger.NewCleanup(b.l, p), p)
		wg.Go(func() {
			c.run()
			left <- b.eligibleLeft(ledger.NameWorkQueuePoller, 30*time.Minute)
		})
	}
	wg.Wait()
	close(left)
	for n := range left {
		if n != 0 {
			t.Fatalf("a cycle ended with %d eligible runs left", n)
		}
	}
}

// sweepMergesAliases: a pass listed under its short
// name (1h) and its full name (24h), never checked at startup: the sweep keeps the
// longer retention under both names and warns once.
func sweepMergesAliases(t *testing.T, db *DB) {
	b := newCleanupBook(t, db)
	full := "github.com/acme/jobs.PatchPass"
	short := b.run("PatchPass", ledger.Completed, 2*time.Hour)
	long := b.run(full, ledger.Completed, 2*time.Hour)
	gone := b.run(full, ledger.Completed, 25*time.Hour)
	p := cleanupPlan(t, ledger.CleanupConfig{Names: []ledger.NameRetention{
		{Name: "PatchPass", Retention: retainFor(time.Hour)}, {Name: full, Retention: retainFor(24 * time.Hour)},
	}})
	for _, aliases := range []map[string]string{nil, ledger.AliasesFor([]string{full})} {
		var warnings []string
		c := ledger.NewCleanup(b.l, p).WithWarnings(func(w string) { warnings = append(warnings, w) })
		if aliases != nil {
			c = c.WithAliases(aliases)
		}
		newCycle(t, c, p).run()
		newCycle(t, c, p).run()
		if got, want := b.left(), []int64{short, long}; !slices.Equal(got, want) {
			t.Fatalf("aliases %v: left %v, want %v (only %d is older than the longer 24h)", aliases, got, want, gone)
		}
		if len(warnings) != 1 || !strings.Contains(warnings[0], "PatchPass") || !strings.Contains(warnings[0], "24h") {
			t.Fatalf("aliases %v: warnings %q, want one naming the pass and the retention kept", aliases, warnings)
		}
	}
}
