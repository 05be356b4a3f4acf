package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"io"
	"net/url"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/bench/internal/onesweep"
	"github.com/retentionkit/retention/passes"
)

// variant is one way of purging the expired rows of the fixture's table.
type variant struct {
	name string
	// create makes and fills the table the variant purges.
	create func(fixture, context.Context, *bun.DB) error
	// purge runs to its end and returns how long it took.
	purge func(context.Context, config, fixture, *bun.DB, time.Time) (time.Duration, error)
}

func variants() []variant {
	return []variant{
		{name: "table pass with partitions: (drop, concurrently)", create: fixture.createTableFor, purge: tablePass(true)},
		{name: "table pass without partitions: (row path)", create: fixture.createTableFor, purge: tablePass(false)},
		{name: "pg_partman run_maintenance, retention set", create: fixture.createPartmanFor, purge: partman},
	}
}

func (f fixture) createTableFor(ctx context.Context, db *bun.DB) error { return f.createTable(ctx, db) }
func (f fixture) createPartmanFor(ctx context.Context, db *bun.DB) error {
	return f.createPartman(ctx, db)
}

// tablePass runs one sweep of a table pass over the table on an actors.Runtime
// (onesweep.Run, as bench/drain times it), with or without partitions:.
func tablePass(withPartitions bool) func(context.Context, config, fixture, *bun.DB, time.Time) (time.Duration, error) {
	return func(ctx context.Context, c config, f fixture, db *bun.DB, cutoff time.Time) (time.Duration, error) {
		spec := passes.TableSpec{Table: f.table(), KeyColumns: []string{"at", "id"}, Timestamp: "at"}
		if withPartitions {
			spec.Partitions = &passes.PartitionSpec{Mode: passes.PartitionDrop, LockTimeout: c.lockTimeout}
		}
		tbl, err := passes.NewTable(db, "events", spec)
		if err != nil {
			return 0, err
		}
		var bound time.Duration
		if !withPartitions {
			bound = c.rowBound
		}
		r, err := onesweep.Run(ctx, tbl, c.batch, cutoff, bound)
		return r.Elapsed, err
	}
}

// partman sets pg_partman's retention so that its reference time (now) less the
// retention is the cutoff, drops rather than detaches (retention_keep_table false), and
// times run_maintenance on the table. pg_partman retires whole partitions only.
func partman(ctx context.Context, _ config, f fixture, db *bun.DB, cutoff time.Time) (time.Duration, error) {
	var took time.Duration
	err := inUTC(ctx, db, func(conn *sql.Conn) error {
		if _, err := conn.ExecContext(ctx, "UPDATE "+f.partman+".part_config SET retention = (now() - $1::timestamptz)::text, retention_keep_table = false WHERE parent_table = $2",
			cutoff, f.parent()); err != nil {
			return err
		}
		start := time.Now()
		_, err := conn.ExecContext(ctx, "SELECT "+f.partman+".run_maintenance(p_parent_table := $1, p_jobmon := false)", f.parent())
		took = time.Since(start)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("pg_partman run_maintenance: %w", err)
	}
	return took, nil
}

// result is one run.
type result struct {
	size     size
	cut      string
	variant  string
	took     time.Duration
	left     int64 // eligible rows left
	fg       fgStats
	wal      int64
	dead     int64
	extra    int64 // fixture rows left that the reference does not keep
	missing  int64 // reference rows the table lost
	skipped  string
	eligible int64 // the fixture's rows below the cutoff
}

// bounded reports whether the run was stopped by -row-bound before the eligible set was
// empty.
func (r result) bounded() bool { return r.left > 0 && strings.Contains(r.variant, "row path") }

// estimate is the wall time to an empty eligible set: the time taken, or for a bounded
// run the time taken scaled by the eligible rows over the rows it deleted.
func (r result) estimate() time.Duration {
	if !r.bounded() || r.left >= r.eligible {
		return r.took
	}
	return time.Duration(float64(r.took) * float64(r.eligible) / float64(r.eligible-r.left))
}

func run(ctx context.Context, c config, progress io.Writer) (string, error) {
	results, err := measure(ctx, c, progress)
	if err != nil {
		return "", err
	}
	return report(c, results), nil
}

// measure runs every selected variant at both cutoffs on every fixture size.
func measure(ctx context.Context, c config, progress io.Writer) ([]result, error) {
	// The fixture's statements and the row path's sweep outlast the driver's default
	// read timeout.
	if u, err := url.Parse(c.dsn); err == nil && u.Query().Get("read_timeout") == "" {
		q := u.Query()
		q.Set("read_timeout", "30m")
		u.RawQuery = q.Encode()
		c.dsn = u.String()
	}
	db, err := passes.Open(ctx, passes.DriverPostgres, c.dsn)
	if err != nil {
		return nil, fmt.Errorf("no PostgreSQL at -dsn: %w", err)
	}
	defer db.Close()
	suffix := make([]byte, 3)
	_, _ = rand.Read(suffix)
	prefix := "pb_" + hex.EncodeToString(suffix)
	if c.createExtension {
		_, _ = db.DB.ExecContext(ctx, "CREATE EXTENSION IF NOT EXISTS pg_partman") // absent: its rows say not run
	}
	var partman sql.NullString
	var schema string
	if err := db.DB.QueryRowContext(ctx, "SELECT (SELECT extnamespace::regnamespace::text FROM pg_extension WHERE extname = 'pg_partman'), current_schema()").Scan(&partman, &schema); err != nil {
		return nil, err
	}
	var results []result
	for _, s := range c.sizes {
		f := newFixture(s, prefix, time.Now())
		f.schema, f.partman = schema, partman.String
		fmt.Fprintf(progress, "fixture: %s\n", s)
		if err := f.build(ctx, db); err != nil {
			return nil, err
		}
		for _, cut := range f.cuts() {
			for _, v := range variants() {
				if !selected(c.only, v.name) {
					continue
				}
				r := result{size: s, cut: cut.name, variant: v.name, eligible: cut.eligible}
				if strings.HasPrefix(v.name, "pg_partman") && f.partman == "" {
					r.skipped = "pg_partman is not installed in the database"
					results = append(results, r)
					continue
				}
				fmt.Fprintf(progress, "  %s, %s ...", cut.name, v.name)
				if err := runOne(ctx, c, f, db, v, cut.at, &r); err != nil {
					_ = f.drop(ctx, db)
					return nil, fmt.Errorf("%s, %s, %s: %w", s, cut.name, v.name, err)
				}
				fmt.Fprintf(progress, " %.2fs, %d eligible left, keep-set %d/%d\n", r.took.Seconds(), r.left, r.extra, r.missing)
				results = append(results, r)
			}
		}
		if err := f.drop(ctx, db); err != nil {
			return nil, err
		}
	}
	return results, nil
}

func runOne(ctx context.Context, c config, f fixture, db *bun.DB, v variant, cutoff time.Time, r *result) error {
	if err := v.create(f, ctx, db); err != nil {
		return err
	}
	l, err := startLoad(ctx, db, f, c.rate, c.workers)
	if err != nil {
		return err
	}
	time.Sleep(time.Second) // the load reaches its rate before the purge starts
	var lsn0 string
	if err := db.DB.QueryRowContext(ctx, "SELECT pg_current_wal_lsn()::text").Scan(&lsn0); err != nil {
		l.stop(time.Now(), time.Now())
		return err
	}
	// The purge has a pool of its own, closed when it ends, so its backends exit and
	// flush their statistics (an idle backend may hold them for seconds).
	pdb, err := passes.Open(ctx, passes.DriverPostgres, c.dsn)
	if err != nil {
		l.stop(time.Now(), time.Now())
		return err
	}
	start := time.Now()
	took, err := v.purge(ctx, c, f, pdb, cutoff)
	end := time.Now()
	pdb.Close()
	fg, lerr := l.stop(start, end)
	if err != nil {
		return err
	}
	if lerr != nil {
		return lerr
	}
	r.took, r.fg = took, fg
	if err := db.DB.QueryRowContext(ctx, "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1::pg_lsn)::bigint", lsn0).Scan(&r.wal); err != nil {
		return err
	}
	if r.left, err = f.eligibleLeft(ctx, db, cutoff); err != nil {
		return err
	}
	if r.extra, r.missing, err = f.keepSet(ctx, db, cutoff); err != nil {
		return err
	}
	time.Sleep(1500 * time.Millisecond) // the sweep's backends flush their statistics
	r.dead, err = f.deadTuples(ctx, db)
	return err
}

func selected(only, name string) bool {
	if only == "" {
		return true
	}
	for _, o := range strings.Split(only, ",") {
		if o != "" && strings.Contains(name, o) {
			return true
		}
	}
	return false
}

func report(c config, results []result) string {
	var w strings.Builder
	fmt.Fprintf(&w, "## Partitioned tables (`bench/partitions`)\n\n")
	fmt.Fprintf(&w, "Produced by `go run ./bench/partitions %s` on PostgreSQL, %d cores, load average %s when it ended.\n\n", strings.Join(os.Args[1:], " "), runtime.NumCPU(), loadAvg())
	fmt.Fprintf(&w, "Foreground: %d transactions/s on %d connections; pass batch %d, partitions lock_timeout %s. WAL includes the foreground's. Dead tuples are counted on the partitions left, autovacuum off on them.\n\n", c.rate, c.workers, c.batch, c.lockTimeout)
	fmt.Fprintf(&w, "| fixture | cutoff | variant | wall time (s) | eligible left | vs row path | fg tx | fg p99 (ms) | fg longest (ms) | longest lock wait (ms) | WAL (MB) | dead tuples | keep-set |\n")
	fmt.Fprintf(&w, "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n")
	rowPath := map[string]time.Duration{}
	for _, r := range results {
		if strings.Contains(r.variant, "row path") {
			rowPath[r.size.String()+r.cut] = r.estimate()
		}
	}
	for _, r := range results {
		if r.skipped != "" {
			fmt.Fprintf(&w, "| %s | %s | %s | not run: %s ||||||||||\n", r.size, r.cut, r.variant, r.skipped)
			continue
		}
		ratio := "—"
		if rp, ok := rowPath[r.size.String()+r.cut]; ok && r.took > 0 && !strings.Contains(r.variant, "row path") {
			ratio = fmt.Sprintf("%.1f×", float64(rp)/float64(r.took))
		}
		keep := "exact (both EXCEPTs empty)"
		wall := fmt.Sprintf("%.2f", r.took.Seconds())
		switch {
		case r.bounded():
			wall = fmt.Sprintf("stopped at %.0f; est. %.0f", r.took.Seconds(), r.estimate().Seconds())
			keep = fmt.Sprintf("not finished (%d expired left, %d kept lost)", r.extra, r.missing)
		case r.extra != 0 || r.missing != 0:
			keep = fmt.Sprintf("differs: %d expired left, %d kept lost", r.extra, r.missing)
		}
		fmt.Fprintf(&w, "| %s | %s | %s | %s | %d | %s | %d | %.1f | %.1f | %.1f | %.1f | %d | %s |\n",
			r.size, r.cut, r.variant, wall, r.left, ratio, r.fg.n, ms(r.fg.p99), ms(r.fg.longest), ms(r.fg.lockWait), float64(r.wal)/(1<<20), r.dead, keep)
	}
	return w.String()
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}
