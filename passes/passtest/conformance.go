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
	// OpenAlone is Open on a database no other test's sessions use, for the behaviours
	// that count the database's sessions (busy sessions). nil: Open's already is one.
	OpenAlone func(t testing.TB) *DB
	// NoRowLocks says the database has no row locks another session can hold while a
	// sweep runs (SQLite locks the whole database for a writer), so the behaviours of
	// rows passed over because another transaction holds them do not apply to it.
	NoRowLocks bool
	// NoTimeZones says the database stores no time zone with a timestamp (SQLite keeps
	// text), so it cannot honour a pass's timestamp_zone: the suite then expects startup
	// to refuse one, and skips the behaviours of zoned columns.
	NoTimeZones bool
	// OpenInZone is Open with every session's time zone set to zone (an IANA name), as
	// a server configured with it would hand every session: the zone a naive timestamp
	// column's wall times are written in. A database that keeps a time zone must give
	// it, since the behaviours of naive columns on a server off UTC need it; one that
	// keeps none says NoTimeZones and leaves it nil.
	OpenInZone func(t testing.TB, zone string) *DB
	// NoSessionLocks says the database has no lock a session holds and the server drops
	// when the session dies (SQLite has none: its locks are the file's), so a sweep lock
	// cannot be offered: the suite then expects it refused with
	// passes.ErrClusterUnsupported, and skips the behaviours of a held lock.
	NoSessionLocks bool
	// NoLockHolderNames says the server keeps no application name for a session that
	// another session can read (MySQL and MariaDB keep none), so a lock's holder is
	// named by its backend id and address alone, and a sweep denied its lock cannot say
	// which member holds it.
	NoLockHolderNames bool
	// NoColumnTypes says the database's columns have no types a sweep must respect
	// (SQLite's are affinities: any column holds any value), so startup cannot refuse a
	// timestamp column whose type does not fit its format.
	NoColumnTypes bool
	// NoCulprits says the database's errors name neither the constraint nor the table
	// that refused a row's delete (SQLite's do not), so a quarantined row cannot say who
	// holds it.
	NoCulprits bool
}

// SQLiteTarget is an embedded SQLite file database per test, in the test's temporary
// directory. It lacks row locks, zoned timestamps, session locks, column types and
// culprits.
func SQLiteTarget() Target {
	return Target{Name: "sqlite", Open: func(t testing.TB) *DB { return SQLite(t) }, NoRowLocks: true, NoTimeZones: true, NoSessionLocks: true, NoColumnTypes: true, NoCulprits: true}
}

// PostgresTarget is a schema of its own per test on the server TEST_DATABASE_URL names.
// With TEST_DATABASE_URL unset it skips, except under CI=true, where the suite must run
// on PostgreSQL and so fails.
func PostgresTarget() Target {
	return Target{Name: "postgres", Open: func(t testing.TB) *DB { return openPostgres(t, "") }, OpenInZone: openPostgres, OpenAlone: PostgresAlone}
}

// openPostgres opens a schema of its own, in zone's sessions unless zone is "".
func openPostgres(t testing.TB, zone string) *DB {
	t.Helper()
	if os.Getenv("TEST_DATABASE_URL") == "" && os.Getenv("CI") == "true" {
		t.Fatal("TEST_DATABASE_URL is not set (CI=true: the PostgreSQL conformance suite must run)")
	}
	if zone == "" {
		return Postgres(t)
	}
	return postgresWith(t, map[string]any{"TimeZone": zone})
}

// behaviour is one stated behaviour of the suite: a subtest on a fresh database.
type behaviour struct {
	name string
	run  func(t *testing.T, db *DB)
	// onTarget, instead of run, opens its own databases from the target (in a time
	// zone, say).
	onTarget func(t *testing.T, target Target)
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
		{"recovery", recoveryBehaviours()},
		{"cleanup", cleanupBehaviours()},
		{"quarantine", quarantineBehaviours()},
		{"drift", driftBehaviours()},
		{"concurrent", concurrentBehaviours()},
		{"hygiene", hygieneBehaviours()},
		{"sweeplock", sweepLockBehaviours()},
		{"sessionlocks", sessionLockBehaviours()},
		{"pace", paceBehaviours()},
	}
	if !target.NoTimeZones && target.OpenInZone == nil {
		t.Fatalf("target %s keeps time zones but gives no OpenInZone: say NoTimeZones, or give it", target.Name)
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
					if b.onTarget != nil {
						b.onTarget(t, target)
						return
					}
					b.run(t, target.Open(t))
				})
			}
		})
	}
}
