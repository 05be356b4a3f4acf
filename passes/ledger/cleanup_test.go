package ledger_test

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

var now = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

// book is a migrated ledger with helpers to write rows directly.
type book struct {
	t   *testing.T
	db  *bun.DB
	l   *ledger.Ledger
	p   string
	ids int64
}

func newBook(t *testing.T, db *bun.DB) *book {
	t.Helper()
	p := testPrefix(t, db)
	if _, err := ledger.Migrate(context.Background(), db, p); err != nil {
		t.Fatal(err)
	}
	l, _ := ledger.New(db, p)
	return &book{t: t, db: db, l: l, p: p}
}

func (b *book) exec(q string, args ...any) {
	b.t.Helper()
	if _, err := b.db.ExecContext(context.Background(), strings.ReplaceAll(q, "{p}", b.p), args...); err != nil {
		b.t.Fatalf("%s: %v", q, err)
	}
}

// run inserts a metadata row that started age ago and returns its id.
func (b *book) run(name string, state ledger.State, age time.Duration) int64 {
	b.ids++
	b.exec("INSERT INTO {p}metadata (id, name, state, start_time) VALUES (?, ?, ?, ?)", b.ids, name, state, now.Add(-age))
	return b.ids
}

func (b *book) left() []int64 {
	var ids []int64
	if err := b.db.NewSelect().TableExpr(b.p+"metadata").Column("id").Order("id").Scan(context.Background(), &ids); err != nil {
		b.t.Fatal(err)
	}
	return ids
}

type skips struct{ keys []any }

func (s *skips) RowSkipped(key any, _ error) { s.keys = append(s.keys, key) }
func (s *skips) MoreWaiting()                {}

// sweep runs one cleanup sweep at now the way the runtime does, batch by batch.
func (b *book) sweep(plan *ledger.Plan) []any {
	b.t.Helper()
	c := ledger.NewCleanup(b.l, plan)
	p, _ := c.Factory()(context.Background())
	r := &skips{}
	reporter := &moreReporter{skips: r}
	ctx := passes.WithBatchReporter(context.Background(), reporter)
	for i := 0; ; i++ {
		reporter.more = false
		n, err := p.PurgeBatch(ctx, plan.BatchSize, now.Add(-plan.Retention))
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
	*skips
	more       bool
	batchSkips int
}

func (m *moreReporter) RowSkipped(key any, err error) { m.batchSkips++; m.skips.RowSkipped(key, err) }
func (m *moreReporter) MoreWaiting()                  { m.more = true }

func plan(t *testing.T, c ledger.CleanupConfig) *ledger.Plan {
	t.Helper()
	p, err := c.Build()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func retain(d time.Duration) *time.Duration { return &d }

func TestCleanupEligibility(t *testing.T) {
	eachDB(t, func(t *testing.T, db *bun.DB) {
		b := newBook(t, db)
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
		b.exec("INSERT INTO {p}work_queue (pass_name, requested_time, state, metadata_id) VALUES ('x', ?, 'Queued', ?)", now, queued)
		done := b.run(internal, ledger.Completed, old) // finished work goes with its run
		b.exec("INSERT INTO {p}work_queue (pass_name, requested_time, state, metadata_id) VALUES ('x', ?, 'Done', ?)", now, done)
		b.exec("INSERT INTO {p}log (metadata_id, level, time, message) VALUES (?, 'info', ?, 'm')", done, now)
		kept, gone = append(kept, queued), append(gone, done)

		b.sweep(plan(t, ledger.CleanupConfig{Names: []ledger.NameRetention{
			{Name: "nightly-import"}, {Name: "customer-patch", Retention: retain(30 * 24 * time.Hour)},
		}}))
		slices.Sort(kept)
		if got := b.left(); !slices.Equal(got, kept) {
			t.Fatalf("left %v, want %v (gone: %v)", got, kept, gone)
		}
	})
}

func TestCleanupGroupsUseTheirOwnCutoffs(t *testing.T) {
	eachDB(t, func(t *testing.T, db *bun.DB) {
		b := newBook(t, db)
		fast := b.run("delta-import", ledger.Completed, 20*time.Minute)            // 10m retention: gone
		slow := b.run("customer-patch", ledger.Completed, 20*24*time.Hour)         // 30d: kept
		slowOld := b.run("customer-patch", ledger.Completed, 31*24*time.Hour)      // 30d: gone
		def := b.run(ledger.NameMetadataCleanup, ledger.Completed, 20*time.Minute) // default 30m: kept
		b.sweep(plan(t, ledger.CleanupConfig{Names: []ledger.NameRetention{
			{Name: "delta-import", Retention: retain(10 * time.Minute)},
			{Name: "customer-patch", Retention: retain(30 * 24 * time.Hour)},
		}}))
		if got, want := b.left(), []int64{slow, def}; !slices.Equal(got, want) {
			t.Fatalf("left %v, want %v (gone %v, %v)", got, want, fast, slowOld)
		}
	})
}

func TestCleanupKeepsChildrenAndDeadLetters(t *testing.T) {
	eachDB(t, func(t *testing.T, db *bun.DB) {
		b := newBook(t, db)
		name := ledger.NameWorkQueuePoller
		parent := b.run(name, ledger.Completed, time.Hour)
		child := b.run("audit-log", ledger.InProgress, time.Hour) // unlisted and running: kept
		b.exec("UPDATE {p}metadata SET parent_id = ? WHERE id = ?", parent, child)
		failedRun := b.run("audit-log", ledger.Failed, time.Hour)
		retryRun := b.run(name, ledger.Completed, time.Hour)
		b.exec("INSERT INTO {p}dead_letter (pass_name, error, created_time, metadata_id, retry_metadata_id) VALUES ('audit-log', 'boom', ?, ?, ?)", now, failedRun, retryRun)
		b.sweep(plan(t, ledger.CleanupConfig{}))
		if got, want := b.left(), []int64{child, failedRun}; !slices.Equal(got, want) {
			t.Fatalf("left %v, want %v", got, want)
		}
		var parentRef, retryRef []*int64
		_ = db.NewSelect().TableExpr(b.p+"metadata").Column("parent_id").Where("id = ?", child).Scan(context.Background(), &parentRef)
		_ = db.NewSelect().TableExpr(b.p+"dead_letter").Column("retry_metadata_id").Scan(context.Background(), &retryRef)
		if len(parentRef) != 1 || (parentRef[0] != nil && *parentRef[0] != 0) || len(retryRef) != 1 || (retryRef[0] != nil && *retryRef[0] != 0) {
			t.Fatalf("references left: parent %v, retry %v", parentRef, retryRef)
		}
	})
}

func TestCleanupBisectsAroundAnOutsideReference(t *testing.T) {
	eachDB(t, func(t *testing.T, db *bun.DB) {
		b := newBook(t, db)
		var ids []int64
		for range 9 {
			ids = append(ids, b.run(ledger.NameWorkQueuePoller, ledger.Completed, time.Hour))
		}
		b.exec("CREATE TABLE {p}audit_ref (id INTEGER PRIMARY KEY, run_id BIGINT NOT NULL REFERENCES {p}metadata (id))")
		b.t.Cleanup(func() { _, _ = db.ExecContext(context.Background(), "DROP TABLE "+b.p+"audit_ref") })
		b.exec("INSERT INTO {p}audit_ref (id, run_id) VALUES (1, ?)", ids[4])
		skipped := b.sweep(plan(t, ledger.CleanupConfig{DeleteBatchSize: 4}))
		if got := b.left(); !slices.Equal(got, []int64{ids[4]}) {
			t.Fatalf("left %v, want only the referenced run %d", got, ids[4])
		}
		if len(skipped) != 1 {
			t.Fatalf("skipped %v", skipped)
		}
	})
}

func TestTwoCleanupsAtOnce(t *testing.T) {
	eachDB(t, func(t *testing.T, db *bun.DB) {
		b := newBook(t, db)
		for i := range 300 {
			state := []ledger.State{ledger.Completed, ledger.Failed, ledger.InProgress}[i%3]
			b.run(ledger.NameWorkQueuePoller, state, time.Hour)
		}
		p := plan(t, ledger.CleanupConfig{DeleteBatchSize: 25})
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() { b.sweep(p) })
		}
		wg.Wait()
		if got := len(b.left()); got != 100 {
			t.Fatalf("%d runs left, want the 100 in progress", got)
		}
	})
}

func TestCleanupOverrideMovesOnlyTheDefaultGroup(t *testing.T) {
	eachDB(t, func(t *testing.T, db *bun.DB) {
		b := newBook(t, db)
		def := b.run(ledger.NameMetadataCleanup, ledger.Completed, 90*time.Minute)
		own := b.run("customer-patch", ledger.Completed, 90*time.Minute)
		p := plan(t, ledger.CleanupConfig{Names: []ledger.NameRetention{{Name: "customer-patch", Retention: retain(time.Hour)}}})
		// Another node stores the override; this one sees it through the database.
		other, _ := ledger.New(db, b.p)
		if err := other.SetCleanupRetention(context.Background(), 2*time.Hour, now); err != nil {
			t.Fatal(err)
		}
		if d, err := b.l.CleanupRetentionOverride(context.Background()); err != nil || d != 2*time.Hour {
			t.Fatalf("override read back = %v, %v", d, err)
		}
		b.sweep(p)
		if got, want := b.left(), []int64{def}; !slices.Equal(got, want) {
			t.Fatalf("left %v, want %v: the override (2h) keeps the default group's 90m-old run, the 1h group loses %d", got, want, own)
		}
	})
}

func TestCleanupConfigurationRules(t *testing.T) {
	tests := []struct {
		name    string
		cfg     ledger.CleanupConfig
		wantErr string
	}{
		{"internal name with its own retention", ledger.CleanupConfig{Names: []ledger.NameRetention{{Name: ledger.NameWorkQueuePoller, Retention: retain(time.Hour)}}}, "names[0]"},
		{"one name, two retentions", ledger.CleanupConfig{Names: []ledger.NameRetention{{Name: "a", Retention: retain(time.Hour)}, {Name: "a", Retention: retain(2 * time.Hour)}}}, "names[1]"},
		{"batch size too large", ledger.CleanupConfig{DeleteBatchSize: 10001}, "delete_batch_size"},
		{"same name, same retention", ledger.CleanupConfig{Names: []ledger.NameRetention{{Name: "a"}, {Name: "a"}}}, ""},
		{"internal name listed without a retention", ledger.CleanupConfig{Names: []ledger.NameRetention{{Name: ledger.NameWorkQueuePoller}}}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := tc.cfg.Build()
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				count := 0
				for _, g := range p.Groups {
					for _, n := range g.Names {
						if n == "a" {
							count++
						}
					}
				}
				if count > 1 {
					t.Fatalf("a name was counted %d times", count)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Build = %v, want an error naming %s", err, tc.wantErr)
			}
		})
	}
	p := plan(t, ledger.CleanupConfig{Names: []ledger.NameRetention{{Name: "PatchPass", Retention: retain(time.Hour)}, {Name: "github.com/acme/jobs.PatchPass", Retention: retain(24 * time.Hour)}}})
	aliases := ledger.AliasesFor([]string{"github.com/acme/jobs.PatchPass", "audit-log"})
	if len(aliases) != 1 || aliases["PatchPass"] != "github.com/acme/jobs.PatchPass" {
		t.Fatalf("AliasesFor = %v", aliases)
	}
	if err := p.CheckAliases(aliases); err == nil {
		t.Fatal("CheckAliases accepted one pass under two names with two retentions")
	}
	var warnings []string
	merged := p.MergeAliases(aliases, func(w string) { warnings = append(warnings, w) })
	for _, g := range merged.Groups {
		if slices.Contains(g.Names, "PatchPass") && g.Retention != 24*time.Hour {
			t.Fatalf("bypassed conflict kept %v, want the longer 24h", g.Retention)
		}
	}
	if len(warnings) != 1 {
		t.Fatalf("warnings = %v", warnings)
	}
}
