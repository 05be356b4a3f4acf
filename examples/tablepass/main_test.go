package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/actors/actortest"
	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/passtest"
)

// seedSessions seeds twelve sessions around the cutoff a sweep at actortest.Epoch uses:
// expired 1, 2, 4, 5, 7, 8, 10, 11 and fresh 3, 6, 9, 12 (passtest interleaves them),
// every fifth a service session, the rest browser and API sessions by turns.
func seedSessions(t *testing.T, db *passtest.DB, opts passes.Options) *passtest.Table {
	t.Helper()
	return passtest.Seed(t, db, passtest.Fixture{
		Table: "sessions", Timestamp: "last_seen", Format: passes.TimestampUnixSeconds,
		Cutoff: actortest.SweepCutoff(opts), Expired: 8, Fresh: 4,
		Columns: []passtest.Column{{Name: "kind", Type: "TEXT NOT NULL", Value: func(r passtest.Row) any {
			switch {
			case r.Key[0]%5 == 0:
				return "service"
			case r.Key[0]%2 == 0:
				return "api"
			}
			return "web"
		}}},
	})
}

func keys(ids ...int64) []passtest.Key {
	out := make([]passtest.Key, len(ids))
	for i, id := range ids {
		out[i] = passtest.Key{id}
	}
	return out
}

// TestExpiredSessions runs the service's pass on the runtime: the expired browser and
// API sessions go, the fresh ones and every service session stay.
func TestExpiredSessions(t *testing.T) {
	passtest.Each(t, func(t *testing.T, db *passtest.DB) {
		opts := Options()
		opts.BatchDelay = 0 // SweepOnce's clock stands still; pacing is tested on the harness
		opts.BatchSize = 4  // two batches: 4, then a short one of 2
		tbl := seedSessions(t, db, opts)
		pass, err := passes.NewTable(db.DB, Name, Spec())
		if err != nil {
			t.Fatal(err)
		}
		if check := pass.ValidateStartup(context.Background()); check.Failed() || len(check.Warnings()) > 0 {
			t.Fatalf("startup check: %s %v", check.Message(), check.Warnings())
		}

		done, _ := actortest.SweepOnce(t, actors.Config{}, pass.Registration(opts))
		if done.Rows != 6 || done.Batches != 2 || done.Reason != actors.Drained {
			t.Fatalf("sweep = %+v, want 6 rows in 2 batches, drained", done)
		}
		tbl.RequireDeleted(t, keys(1, 2, 4, 7, 8, 11)...)
		tbl.RequireKept(t, keys(5, 10)...)              // expired, but service sessions
		tbl.RequireLeft(t, keys(3, 5, 6, 9, 10, 12)...) // and nothing else
	})
}

// TestDryRunDeletesNothing runs what main prints.
func TestDryRunDeletesNothing(t *testing.T) {
	passtest.Each(t, func(t *testing.T, db *passtest.DB) {
		tbl := seedSessions(t, db, Options())
		pass, err := passes.NewTable(db.DB, Name, Spec())
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := dryRun(context.Background(), &out, pass, actortest.Epoch); err != nil {
			t.Fatal(err)
		}
		if want := "expired-sessions: a sweep now would delete 6 rows\n"; out.String() != want {
			t.Fatalf("dry run printed %q, want %q", out.String(), want)
		}
		tbl.RequireCount(t, 12)
	})
}

// TestDryRunRefusesAMissingColumn: a table that does not match the declaration fails
// the startup check, and main says why.
func TestDryRunRefusesAMissingColumn(t *testing.T) {
	db := passtest.SQLite(t)
	passtest.Seed(t, db, passtest.Fixture{Table: "sessions", Timestamp: "last_seen", Format: passes.TimestampUnixSeconds, Cutoff: actortest.Epoch, Expired: 1})
	pass, err := passes.NewTable(db.DB, Name, Spec())
	if err != nil {
		t.Fatal(err)
	}
	err = dryRun(context.Background(), &bytes.Buffer{}, pass, actortest.Epoch)
	if err == nil || !strings.Contains(err.Error(), "kind") {
		t.Fatalf("dry run of a table without kind = %v", err)
	}
}
