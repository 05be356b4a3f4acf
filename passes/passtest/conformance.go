package passtest

import (
	"os"
	"testing"
)

// Target is one database the conformance suite runs on. A driver's conformance test
// builds one and hands it to RunConformance; the suite asks nothing else of it.
type Target struct {
	// Name names the database in messages ("sqlite", "postgres").
	Name string
	// Open returns a fresh, empty database for one test, cleaned up when the test ends.
	// Every subtest calls it once, so subtests share no tables and run in parallel.
	Open func(t testing.TB) *DB
	// NoRowLocks says the database has no row locks another session can hold while a
	// sweep runs (SQLite locks the whole database for a writer), so the behaviours of
	// rows passed over because another transaction holds them do not apply to it.
	NoRowLocks bool
	// NoTimeZones says the database stores no time zone with a timestamp (SQLite keeps
	// text), so it cannot honour a pass's timestamp_zone: the suite then expects startup
	// to refuse one, and skips the behaviours of zoned columns.
	NoTimeZones bool
	// NoCulprits says the database's errors name neither the constraint nor the table
	// that refused a row's delete (SQLite's do not), so a quarantined row cannot say who
	// holds it.
	NoCulprits bool
}

// SQLiteTarget is an embedded SQLite file database per test, in the test's temporary
// directory. It lacks row locks and zoned timestamps.
func SQLiteTarget() Target {
	return Target{Name: "sqlite", Open: func(t testing.TB) *DB { return SQLite(t) }, NoRowLocks: true, NoTimeZones: true, NoCulprits: true}
}

// PostgresTarget is a schema of its own per test on the server TEST_DATABASE_URL names.
// With TEST_DATABASE_URL unset it skips, except under CI=true, where the suite must run
// on PostgreSQL and so fails.
func PostgresTarget() Target {
	return Target{Name: "postgres", Open: openPostgres}
}

func openPostgres(t testing.TB) *DB {
	t.Helper()
	if os.Getenv("TEST_DATABASE_URL") == "" && os.Getenv("CI") == "true" {
		t.Fatal("TEST_DATABASE_URL is not set (CI=true: the PostgreSQL conformance suite must run)")
	}
	return Postgres(t)
}

// behaviour is one stated behaviour of the suite: a subtest on a fresh database.
type behaviour struct {
	name string
	run  func(t *testing.T, db *DB)
	// skip returns why target lacks what the behaviour needs, or "" when it applies.
	skip func(target Target) string
}

// RunConformance states every table-pass and ledger behaviour once, as subtests named
// area/behaviour, each on a fresh database of target and in parallel with the others.
// A driver passes the suite when every subtest passes; a behaviour the target honestly
// lacks (see Target's flags) is skipped with the reason.
func RunConformance(t *testing.T, target Target) {
	areas := []struct {
		name       string
		behaviours []behaviour
	}{
		{"keyset", keysetBehaviours()},
		{"keytypes", keyTypeBehaviours()},
		{"cutoff", cutoffBehaviours()},
		{"keepset", keepSetBehaviours()},
		{"filter", filterBehaviours()},
		{"zone", zoneBehaviours()},
		{"bisection", bisectionBehaviours()},
		{"dryrun", dryRunBehaviours()},
		{"locked", lockedBehaviours()},
		{"childlocks", childLockBehaviours()},
		{"cancellation", cancellationBehaviours()},
		{"ledger", ledgerBehaviours()},
		{"quarantine", quarantineBehaviours()},
		{"drift", driftBehaviours()},
		{"concurrent", concurrentBehaviours()},
	}
	for _, area := range areas {
		t.Run(area.name, func(t *testing.T) {
			t.Parallel()
			for _, b := range area.behaviours {
				t.Run(b.name, func(t *testing.T) {
					t.Parallel()
					if b.skip != nil {
						if why := b.skip(target); why != "" {
							t.Skipf("%s: %s", target.Name, why)
						}
					}
					b.run(t, target.Open(t))
				})
			}
		})
	}
}
