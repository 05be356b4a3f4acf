package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/retentionkit/retention/passes"
)

// LockClasses are the advisory-lock classes (the first key of the two-key form) the
// node uses for a pass's exclusivity lock and for the cluster-wide delete slots.
type LockClasses struct {
	Pass int64
	Slot int64
}

// DefaultLockClasses are the classes the node's sweep locks and slots use.
var DefaultLockClasses = LockClasses{Pass: int64(passes.SweepLockClass), Slot: int64(passes.SlotLockClass)}

// KeepFigures is one table against its keep-set.
type KeepFigures struct {
	Table   string
	Kept    int64 // keep-set rows still there
	Wrongly int64 // keep-set rows gone: deleted although the rule keeps them
	Left    int64 // rows still there the rule deletes
	Gone    int64 // rows the batch log says were deleted
}

// OK reports whether nothing was wrongly deleted and nothing expired is left.
func (k KeepFigures) OK() bool { return k.Wrongly == 0 && k.Left == 0 }

func (k KeepFigures) String() string {
	return fmt.Sprintf("%s: %d kept, %d deleted, %d wrongly deleted, %d expired left", k.Table, k.Kept, k.Gone, k.Wrongly, k.Left)
}

// Keep measures table against mn_keep.
func (d *DB) Keep(ctx context.Context, table string) (KeepFigures, error) {
	k := KeepFigures{Table: table}
	var err error
	q := func(s string) int64 {
		if err != nil {
			return 0
		}
		var n int64
		n, err = d.Count(ctx, strings.ReplaceAll(s, "{t}", table), table)
		return n
	}
	k.Kept = q(`SELECT count(*) FROM mn_keep k JOIN {t} t ON t.id = k.id WHERE k.tbl = $1`)
	k.Wrongly = q(`SELECT count(*) FROM mn_keep k WHERE k.tbl = $1 AND NOT EXISTS (SELECT 1 FROM {t} t WHERE t.id = k.id)`)
	k.Left = q(`SELECT count(*) FROM {t} t WHERE NOT EXISTS (SELECT 1 FROM mn_keep k WHERE k.tbl = $1 AND k.id = t.id)`)
	k.Gone = q(`SELECT coalesce(sum(nrows), 0) FROM mn_batches WHERE tbl = $1`)
	return k, err
}

// Remaining counts the rows of table the rule deletes that are still there.
func (d *DB) Remaining(ctx context.Context, table string) (int64, error) {
	return d.Count(ctx, fmt.Sprintf(`SELECT count(*) FROM %s t WHERE NOT EXISTS (SELECT 1 FROM mn_keep k WHERE k.tbl = $1 AND k.id = t.id)`, table), table)
}

// Interleaving is two members whose batches on one table alternate: in commit order,
// the table's deletes switched between them Switches times.
type Interleaving struct {
	Table      string
	AppA, AppB string
	Switches   int
}

func (o Interleaving) String() string {
	return fmt.Sprintf("%s: the batches switched %d times between %s and %s", o.Table, o.Switches, o.AppA, o.AppB)
}

// MaxMoveSwitches is how often a pass's batches may switch between two members without
// the two deleting at once: a pass moves from one to the other and, after another
// topology change, back, once or twice in a scenario. Two members deleting at the same
// time switch on nearly every batch.
const MaxMoveSwitches = 3

// Interleavings lists every pair of members (application names) whose batches on one
// table switched between them more than MaxMoveSwitches times. Without drain helpers
// there must be none. It compares members, not sessions: a member's sweeps take
// whichever pooled connection is free, so one member's sessions alternate on a table
// without any overlap. (Every batch holding its pass's one lock, see Locks, is the
// proof of exclusivity; this is what a broken lock would look like from outside.)
func (d *DB) Interleavings(ctx context.Context) ([]Interleaving, error) {
	rows, err := d.query(ctx, `WITH seq AS (
			SELECT tbl, app, lag(app) OVER (PARTITION BY tbl ORDER BY at, id) AS prev FROM mn_batches)
		SELECT tbl, least(app, prev), greatest(app, prev), count(*) FROM seq
		WHERE prev IS NOT NULL AND prev <> app
		GROUP BY 1, 2, 3 HAVING count(*) > $1 ORDER BY 1, 2, 3`, MaxMoveSwitches)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Interleaving
	for rows.Next() {
		var o Interleaving
		if err := rows.Scan(&o.Table, &o.AppA, &o.AppB, &o.Switches); err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, rows.Err()
}

// LockFigures is what the batch log says about the locks each batch ran under.
type LockFigures struct {
	Batches int64
	// WithoutPassLock counts batches whose session held no lock of the pass class;
	// WithoutSlot those whose member (every session with its application_name) held no
	// slot.
	WithoutPassLock, WithoutSlot int64
	// WithoutSlotAfterDeath counts the batches of a killed member (LocksAfterDeaths)
	// that ended without a slot after the kill: the slot's idle session dies with the
	// process at once, while a DELETE the process had already sent runs on to its end on
	// its own session (which still holds the pass's lock). They are not in WithoutSlot.
	WithoutSlotAfterDeath int64
	// MaxSlots is the most slots granted in the database at any batch.
	MaxSlots int64
	// PassKeys is, per table, the distinct pass-lock keys its batches ran under: one
	// per identity (the pass, and each drain helper).
	PassKeys map[string]int
	// Apps is, per table, the distinct sessions' application names that deleted there.
	Apps map[string][]string
}

// Locks reads the batch log's lock figures.
func (d *DB) Locks(ctx context.Context, c LockClasses) (LockFigures, error) {
	return d.LocksAfterDeaths(ctx, c, nil)
}

// LocksAfterDeaths is Locks with the members killed (application name -> when): a batch
// of theirs that ended after the kill without a slot counts in WithoutSlotAfterDeath.
func (d *DB) LocksAfterDeaths(ctx context.Context, c LockClasses, deaths map[string]time.Time) (LockFigures, error) {
	f := LockFigures{PassKeys: map[string]int{}, Apps: map[string][]string{}}
	rows, err := d.query(ctx, `SELECT tbl, app, at, held, member_locks, db_locks FROM mn_batches`)
	if err != nil {
		return f, err
	}
	defer rows.Close()
	keys := map[string]map[string]bool{}
	apps := map[string]map[string]bool{}
	passPrefix, slotPrefix := fmt.Sprintf("%d:", c.Pass), fmt.Sprintf("%d:", c.Slot)
	for rows.Next() {
		var tbl, app, held, memberHeld, locks string
		var at time.Time
		if err := rows.Scan(&tbl, &app, &at, &held, &memberHeld, &locks); err != nil {
			return f, err
		}
		f.Batches++
		var pass, slot bool
		for _, h := range strings.Split(strings.Trim(held, "{}"), ",") {
			if strings.HasPrefix(h, passPrefix) {
				pass = true
				if keys[tbl] == nil {
					keys[tbl] = map[string]bool{}
				}
				keys[tbl][h] = true
			}
		}
		for _, h := range strings.Split(strings.Trim(memberHeld, "{}"), ",") {
			slot = slot || strings.HasPrefix(h, slotPrefix)
		}
		if !pass {
			f.WithoutPassLock++
		}
		if killed, ok := deaths[app]; !slot && ok && !at.Before(killed) {
			f.WithoutSlotAfterDeath++
		} else if !slot {
			f.WithoutSlot++
		}
		var byClass map[string]int64
		if err := json.Unmarshal([]byte(locks), &byClass); err != nil {
			return f, err
		}
		var slots int64
		for k, n := range byClass {
			if strings.HasPrefix(k, slotPrefix) {
				slots += n
			}
		}
		f.MaxSlots = max(f.MaxSlots, slots)
		if apps[tbl] == nil {
			apps[tbl] = map[string]bool{}
		}
		apps[tbl][app] = true
	}
	for tbl, k := range keys {
		f.PassKeys[tbl] = len(k)
	}
	for tbl, a := range apps {
		for app := range a {
			f.Apps[tbl] = append(f.Apps[tbl], app)
		}
		sort.Strings(f.Apps[tbl])
	}
	return f, rows.Err()
}

// IdentityApps is, per identity, the application names of the sessions whose batches
// on table ran under that identity's pass lock.
func (d *DB) IdentityApps(ctx context.Context, c LockClasses, table string, identities []string) (map[string][]string, error) {
	out := map[string][]string{}
	for _, id := range identities {
		key := fmt.Sprintf("%d:%d:2", c.Pass, uint32(passes.LockKey(id)))
		q := `SELECT DISTINCT app FROM mn_batches WHERE tbl = $1 AND $2 = ANY(held) ORDER BY 1`
		if d.MySQL {
			q = `SELECT DISTINCT app FROM mn_batches WHERE tbl = $1 AND FIND_IN_SET($2, SUBSTRING(held, 2, CHAR_LENGTH(held) - 2)) > 0 ORDER BY 1`
		}
		rows, err := d.query(ctx, q, table, key)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var app string
			if err := rows.Scan(&app); err != nil {
				rows.Close()
				return nil, err
			}
			out[id] = append(out[id], app)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// LastBatchApp is, per table, the application name of the last batch committed before
// t.
func (d *DB) LastBatchApp(ctx context.Context, before time.Time) (map[string]string, error) {
	q := `SELECT DISTINCT ON (tbl) tbl, app FROM mn_batches WHERE at < $1 ORDER BY tbl, at DESC`
	if d.MySQL {
		q = `SELECT tbl, app FROM (SELECT tbl, app, row_number() OVER (PARTITION BY tbl ORDER BY at DESC, id DESC) AS r
			FROM mn_batches WHERE at < $1) s WHERE r = 1`
	}
	rows, err := d.query(ctx, q, before)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var tbl, app string
		if err := rows.Scan(&tbl, &app); err != nil {
			return nil, err
		}
		out[tbl] = app
	}
	return out, rows.Err()
}

// FirstBatchAfter is when the first batch on table committed after t by a session
// whose application name is not app; ok is false while there is none.
func (d *DB) FirstBatchAfter(ctx context.Context, table string, after time.Time, notApp string) (at time.Time, by string, ok bool, err error) {
	rows, err := d.query(ctx, `SELECT at, app FROM mn_batches WHERE tbl = $1 AND at > $2 AND app <> $3 ORDER BY at LIMIT 1`, table, after, notApp)
	if err != nil {
		return at, "", false, err
	}
	defer rows.Close()
	if rows.Next() {
		err = rows.Scan(&at, &by)
		return at, by, err == nil, err
	}
	return at, "", false, rows.Err()
}

// BatchesBy counts the batches on table committed after t by app.
func (d *DB) BatchesBy(ctx context.Context, table, app string, after time.Time) (int64, error) {
	return d.Count(ctx, `SELECT count(*) FROM mn_batches WHERE tbl = $1 AND app = $2 AND at > $3`, table, app, after)
}

// RunOverlap is two ledger runs of one pass that both deleted and whose [start, end]
// intervals overlap.
type RunOverlap struct {
	Name         string
	IDA, IDB     int64
	NodeA, NodeB string
}

// LedgerOverlaps lists overlapping runs of one pass in the ledger (prefix retention_),
// among runs that did delete (rows or batches recorded). A run left InProgress by a
// member that died ends, for this check, when it died: deaths maps member ids to that
// time (a killed member cannot close its runs; recovery closes them later). A run
// begins, for this check, at its first batch in the batch log (its start when the log
// names none of its batches): a sweep starts before it waits for a slot and takes its
// pass's lock, so a sweep that started while a paused member still held the pass, and
// deleted only once that member let go, would otherwise count as an overlap (seen on
// MariaDB, a few milliseconds apart).
func (d *DB) LedgerOverlaps(ctx context.Context, deaths map[string]time.Time) ([]RunOverlap, error) {
	if d.MySQL {
		return d.ledgerOverlapsMySQL(ctx, deaths)
	}
	var values []string
	for member, at := range deaths {
		values = append(values, fmt.Sprintf("('%s', '%s'::timestamptz)", strings.ReplaceAll(member, "'", "''"), at.UTC().Format(time.RFC3339Nano)))
	}
	deathsSQL := "SELECT NULL::text AS node, NULL::timestamptz AS at WHERE false"
	if len(values) > 0 {
		deathsSQL = "SELECT * FROM (VALUES " + strings.Join(values, ", ") + ") v (node, at)"
	}
	return d.scanOverlaps(ctx, `WITH deaths AS (`+deathsSQL+`),
		r AS (SELECT m.id, m.name, coalesce(m.node_id, '') AS node,
		             coalesce((SELECT min(l.at) FROM mn_batches l WHERE l.tbl = split_part(m.name, '#', 1)
		                       AND l.app = 'retention:' || m.node_id AND l.at >= m.start_time), m.start_time) AS a,
		             CASE WHEN x.at IS NULL THEN coalesce(m.end_time, now()) ELSE least(coalesce(m.end_time, x.at), x.at) END AS b
		      FROM retention_metadata m LEFT JOIN deaths x ON x.node = m.node_id
		      WHERE m.rows_deleted > 0 OR m.batches > 0)
		SELECT x.name, x.id, y.id, x.node, y.node FROM r x JOIN r y ON x.name = y.name AND x.id < y.id
		WHERE x.a < y.b AND y.a < x.b ORDER BY x.name, x.id`)
}

// scanOverlaps runs LedgerOverlaps' query q.
func (d *DB) scanOverlaps(ctx context.Context, q string) ([]RunOverlap, error) {
	rows, err := d.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []RunOverlap
	for rows.Next() {
		var o RunOverlap
		if err := rows.Scan(&o.Name, &o.IDA, &o.IDB, &o.NodeA, &o.NodeB); err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, rows.Err()
}

// LedgerRows is the rows the ledger recorded deleted by runs named name or a drain
// helper of it (name#k).
func (d *DB) LedgerRows(ctx context.Context, name string) (int64, error) {
	if d.MySQL {
		return d.Count(ctx, `SELECT coalesce(sum(rows_deleted), 0) FROM retention_metadata WHERE name = $1 OR name LIKE CONCAT($1, '#%')`, name)
	}
	return d.Count(ctx, `SELECT coalesce(sum(rows_deleted), 0) FROM retention_metadata WHERE name = $1 OR name LIKE $1 || '#%'`, name)
}

// DrainFigures is how one table's drain went, by the batch log's clock.
type DrainFigures struct {
	Rows     int64
	Batches  int64
	Sessions int64
	First    time.Time
	Last     time.Time
}

// Rate is rows per second from the first batch's commit to the last's.
func (f DrainFigures) Rate() float64 {
	s := f.Last.Sub(f.First).Seconds()
	if s <= 0 {
		return 0
	}
	return float64(f.Rows) / s
}

// Drain reads table's drain figures from the batch log.
func (d *DB) Drain(ctx context.Context, table string) (DrainFigures, error) {
	var f DrainFigures
	q := `SELECT coalesce(sum(nrows), 0), count(*), count(DISTINCT (pid, backend_start)),
		coalesce(min(at), now()), coalesce(max(at), now()) FROM mn_batches WHERE tbl = $1`
	if d.MySQL {
		q = `SELECT coalesce(sum(nrows), 0), count(*), count(DISTINCT pid, backend_start),
		coalesce(min(at), UTC_TIMESTAMP(6)), coalesce(max(at), UTC_TIMESTAMP(6)) FROM mn_batches WHERE tbl = $1`
	}
	err := d.queryRow(ctx, q, table).
		Scan(&f.Rows, &f.Batches, &f.Sessions, &f.First, &f.Last)
	return f, err
}
