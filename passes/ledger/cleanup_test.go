package ledger_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

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

// What the metadata cleanup deletes and keeps on a database is stated in the conformance
// suite (passes/passtest, cleanup area), which every driver runs; the plan's rules need
// none and stay here.

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
