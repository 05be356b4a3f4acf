package passtest

import (
	"testing"

	"github.com/retentionkit/retention/passes"
)

// keysetBehaviours: batches take the expired rows oldest first, whatever their keys,
// and a composite key sweeps like a single one.
func keysetBehaviours() []behaviour {
	return []behaviour{
		{name: "oldest first whatever the key order", run: func(t *testing.T, db *DB) { oldestFirst(t, db, nil) }},
		{name: "oldest first with a composite key", run: func(t *testing.T, db *DB) { oldestFirst(t, db, []string{"tenant", "id"}) }},
	}
}

// oldestFirst sweeps batch by batch a table whose later expired keys are older rows (see
// Fixture), and checks after each batch that exactly the oldest rows are gone.
func oldestFirst(t *testing.T, db *DB, key []string) {
	tbl := Seed(t, db, Fixture{Table: "events", Key: key, Cutoff: auditCutoff, Expired: 11, Fresh: 4})
	pass, err := passes.NewTable(db.DB, "events", tbl.Spec())
	if err != nil {
		t.Fatal(err)
	}
	p := openPass(t, pass)
	const size = 3
	// Seed numbers expired rows so that the last expired key is the oldest row.
	byAge := make([]Key, len(tbl.Expired))
	for i, k := range tbl.Expired {
		byAge[len(tbl.Expired)-1-i] = k
	}
	for gone := 0; gone < len(byAge); gone += size {
		n, _ := batchOf(t, p, size) // the fixture's cutoff is auditCutoff
		want := min(size, len(byAge)-gone)
		if n != want {
			t.Fatalf("batch after %d rows: %d deleted, want %d", gone, n, want)
		}
		tbl.RequireDeleted(t, byAge[:gone+n]...)
		tbl.RequireKept(t, byAge[gone+n:]...)
	}
	tbl.RequireKept(t, tbl.Fresh...)
}
