// Command ptarchiver measures a table pass on MariaDB (or MySQL) side by side with
// Percona's pt-archiver --purge, the tool most MySQL shops purge with: one table of N
// rows, 90% expired, with one child table, under a fixed-rate foreground load, each
// variant on a freshly generated copy, with the keep-set checked exactly after every run.
// It writes a markdown report.
//
//	go run ./bench/ptarchiver -out /tmp/ptarchiver.md    # what make bench runs
//
// It needs a MySQL/MariaDB server (-dsn: a user that may create and drop the database
// -db, default rt_mysql_ptarchiver_run) and pt-archiver (Debian's percona-toolkit).
package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"time"

	gomysql "github.com/go-sql-driver/mysql"
)

type config struct {
	dsn        string
	db         string
	rows       int
	reps       int
	rate       int
	workers    int
	idle       time.Duration
	settle     time.Duration // before the idle windows and after the purge
	window     time.Duration
	bound      time.Duration
	only       string
	out        string
	ptArchiver string
}

func main() {
	var c config
	flag.StringVar(&c.dsn, "dsn", envOr("BENCH_MYSQL_DSN", "retention_test@tcp(127.0.0.1:3306)/"), "go-sql-driver DSN of a user that may create the database -db (no database in it)")
	flag.StringVar(&c.db, "db", "rt_mysql_ptarchiver_run", "the database each run creates, fills and drops")
	flag.IntVar(&c.rows, "rows", 1_000_000, "rows in the table; 90% are expired")
	flag.IntVar(&c.reps, "reps", 3, "runs of every variant (the report shows medians)")
	flag.IntVar(&c.rate, "rate", 200, "foreground transactions per second")
	flag.IntVar(&c.workers, "workers", 8, "foreground connections")
	flag.DurationVar(&c.idle, "idle", 10*time.Second, "length of each of the two idle windows (the A/A pair) before every purge")
	flag.DurationVar(&c.window, "window", 60*time.Second, "time bound of pt-archiver at its defaults (one row per commit)")
	flag.DurationVar(&c.bound, "bound", 0, "time bound of every variant (zero: each runs to its end, except pt-archiver's defaults, bounded by -window)")
	flag.StringVar(&c.only, "only", "", "run only the variants whose name contains one of these comma-separated strings ($ marks a name's end)")
	flag.StringVar(&c.out, "out", "", "write the markdown report here (default stdout)")
	flag.StringVar(&c.ptArchiver, "pt-archiver", "pt-archiver", "the pt-archiver to run")
	c.settle = time.Second
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	report, err := run(ctx, c)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ptarchiver:", err)
		stop()
		os.Exit(1)
	}
	if c.out == "" {
		fmt.Print(report)
		return
	}
	if err := os.WriteFile(c.out, []byte(report), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "ptarchiver:", err)
		os.Exit(1)
	}
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// dsnFor is c.dsn on database name, with the driver's own defaults left to it.
func (c config) dsnFor(name string) string {
	cfg, err := gomysql.ParseDSN(c.dsn)
	if err != nil {
		return c.dsn
	}
	cfg.DBName = name
	return cfg.FormatDSN()
}

// ready reports why the benchmark cannot run here, or nil.
func ready(ctx context.Context, c config) (*sql.DB, error) {
	if _, err := exec.LookPath(c.ptArchiver); err != nil {
		return nil, fmt.Errorf("pt-archiver not found (Debian's percona-toolkit): %w", err)
	}
	cfg, err := gomysql.ParseDSN(c.dsn)
	if err != nil {
		return nil, err
	}
	cfg.ParseTime, cfg.MultiStatements = true, false
	conn, err := gomysql.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	admin := sql.OpenDB(conn)
	if err := admin.PingContext(ctx); err != nil {
		admin.Close()
		return nil, fmt.Errorf("no MySQL/MariaDB server at the -dsn: %w", err)
	}
	return admin, nil
}

func run(ctx context.Context, c config) (string, error) {
	admin, err := ready(ctx, c)
	if err != nil {
		return "", err
	}
	defer admin.Close()
	var version string
	if err := admin.QueryRowContext(ctx, "SELECT VERSION()").Scan(&version); err != nil {
		return "", err
	}
	vs := variants(c)
	var chosen []variant
	for _, v := range vs {
		if c.selected(v) {
			chosen = append(chosen, v)
		}
	}
	s := shape{rows: c.rows}
	results := make([][]runResult, len(chosen))
	for rep := 0; rep < c.reps; rep++ {
		// Each repetition starts one variant later, so a drift of the machine's load does
		// not fall on one variant always at the same place.
		for k := range chosen {
			i := (k + rep) % len(chosen)
			r, err := runOnce(ctx, c, admin, chosen[i], s)
			if err != nil {
				return "", fmt.Errorf("%s, run %d: %w", chosen[i].name, rep+1, err)
			}
			fmt.Fprintf(os.Stderr, "ptarchiver: run %d %s: %.0f rows/s, p99 %v (idle %v, A/A %.2f), lock waits %d, deadlocks %d; %s; %s\n",
				rep+1, chosen[i].name, r.rate(), r.drain.quantile(0.99), r.idle.quantile(0.99), r.aa(), r.during.lockWaits, r.during.deadlocks, r.keep, r.out.trace)
			results[i] = append(results[i], r)
		}
	}
	if err := dropDatabase(ctx, admin, c.db); err != nil {
		return "", err
	}
	return writeReport(c, version, chosen, results), nil
}

// selected reports whether -only (comma-separated parts of names; a $ marks a name's
// end, so "batch 500$" is not "batch 5000") selects v.
func (c config) selected(v variant) bool {
	if c.only == "" {
		return true
	}
	for _, part := range strings.Split(c.only, ",") {
		if part != "" && strings.Contains(v.name+"$", part) {
			return true
		}
	}
	return false
}

func dropDatabase(ctx context.Context, admin *sql.DB, name string) error {
	_, err := admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name)
	return err
}

// runResult is one run of one variant.
type runResult struct {
	out          outcome
	idleA, idleB window // the A/A pair, before the purge
	idle         window // both together: the baseline
	drain        window
	idleOLTP     window   // idle and drain without the touches (they share the
	drainOLTP    window   // connections with the touches, so a held touch still delays them)
	quiet        counters // server counters over the idle windows
	during       counters // and over the purge
	keep         keepSet
	finished     bool // the tool ran to its end (not stopped by its bound)
}

// rate is the rows the run deleted (counted in the table, not as the tool reports)
// over the purge's time.
func (r runResult) rate() float64 { return float64(r.keep.deleted) / r.out.elapsed.Seconds() }

// aa is the A/A pair's p99 ratio: the second idle window over the first.
func (r runResult) aa() float64 { return ms(r.idleB.quantile(0.99)) / ms(r.idleA.quantile(0.99)) }

// p99Ratio is the foreground's p99 during the purge over its p99 idle, in the same run.
func (r runResult) p99Ratio() float64 { return ms(r.drain.quantile(0.99)) / ms(r.idle.quantile(0.99)) }

// oltpRatio is p99Ratio over the transactions that touch no expired row.
func (r runResult) oltpRatio() float64 {
	return ms(r.drainOLTP.quantile(0.99)) / ms(r.idleOLTP.quantile(0.99))
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// runOnce generates a fresh table, starts the foreground, measures two idle windows,
// runs the variant, stops the foreground a moment (settle) after it, and checks the
// keep-set.
func runOnce(ctx context.Context, c config, admin *sql.DB, v variant, s shape) (runResult, error) {
	var r runResult
	if err := fresh(ctx, admin, c.db, s); err != nil {
		return r, err
	}
	app, err := sql.Open("mysql", c.dsnFor(c.db))
	if err != nil {
		return r, err
	}
	defer app.Close()
	app.SetMaxOpenConns(c.workers + 2)
	app.SetMaxIdleConns(c.workers + 2)
	// Read the whole table once, so every variant starts from the same buffer pool.
	var n int64
	if err := app.QueryRowContext(ctx, "SELECT COUNT(*) FROM events FORCE INDEX (PRIMARY)").Scan(&n); err != nil {
		return r, err
	}
	fg := &foreground{db: app, shape: s, rate: c.rate, workers: c.workers}
	load := fg.start(ctx)
	stopped := false
	defer func() {
		if !stopped {
			load.stop()
		}
	}()
	if !sleep(ctx, c.settle) { // let the foreground reach its rate
		return r, ctx.Err()
	}
	c0, err := readCounters(ctx, admin)
	if err != nil {
		return r, err
	}
	idleStart := time.Now()
	if !sleep(ctx, 2*c.idle) {
		return r, ctx.Err()
	}
	c1, err := readCounters(ctx, admin)
	if err != nil {
		return r, err
	}
	drainStart := time.Now()
	r.out, err = v.purge(ctx, c, c.db, s, c.boundOf(v))
	drainEnd := time.Now()
	if err != nil {
		return r, err
	}
	c2, err := readCounters(ctx, admin)
	if err != nil {
		return r, err
	}
	if !sleep(ctx, c.settle) {
		return r, ctx.Err()
	}
	txns, tally := load.stop()
	stopped = true
	r.idleA = windowOf(txns, idleStart, idleStart.Add(c.idle), allTxns)
	r.idleB = windowOf(txns, idleStart.Add(c.idle), idleStart.Add(2*c.idle), allTxns)
	r.idle = windowOf(txns, idleStart, idleStart.Add(2*c.idle), allTxns)
	r.drain = windowOf(txns, drainStart, drainEnd, allTxns)
	r.idleOLTP = windowOf(txns, idleStart, idleStart.Add(2*c.idle), oltpOnly)
	r.drainOLTP = windowOf(txns, drainStart, drainEnd, oltpOnly)
	r.quiet, r.during = c1.minus(c0), c2.minus(c1)
	if len(r.idle.lats) == 0 || len(r.drain.lats) == 0 {
		return r, errors.New("the foreground ran no transaction in a window")
	}
	if r.keep, err = checkKeepSet(ctx, app, s, &tally); err != nil {
		return r, err
	}
	r.finished = c.boundOf(v) == 0 || r.keep.expiredLeft == 0
	return r, nil
}

func sleep(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}

// counters are the server's lock counters (global: they count every session's waits,
// the foreground's own included), what it read from disk, wrote to its redo log and
// flushed, and this host's CPU time (/proc/stat; the server's CPU where the benchmark
// runs beside it, as make bench does), as read at one instant.
type counters struct {
	lockWaits   int64 // Innodb_row_lock_waits
	lockTimeMs  int64 // Innodb_row_lock_time
	deadlocks   int64 // Innodb_deadlocks (MariaDB; MySQL 8 has no such status variable)
	hasDeadlock bool
	poolReads   int64 // Innodb_buffer_pool_reads: pages read from disk
	logBytes    int64 // Innodb_os_log_written
	fsyncs      int64 // Innodb_data_fsyncs
	cpuBusy     int64 // jiffies not idle nor waiting for I/O, over all cores
	cpuAll      int64 // all jiffies, over all cores
	secs        float64
}

func readCounters(ctx context.Context, db *sql.DB) (counters, error) {
	c := counters{secs: float64(time.Now().UnixNano()) / 1e9}
	c.cpuBusy, c.cpuAll = hostCPU()
	rows, err := db.QueryContext(ctx, "SHOW GLOBAL STATUS WHERE Variable_name IN ('Innodb_row_lock_waits', 'Innodb_row_lock_time', 'Innodb_deadlocks', 'Innodb_buffer_pool_reads', 'Innodb_os_log_written', 'Innodb_data_fsyncs')")
	if err != nil {
		return c, err
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var v int64
		if err := rows.Scan(&name, &v); err != nil {
			return c, err
		}
		switch strings.ToLower(name) {
		case "innodb_row_lock_waits":
			c.lockWaits = v
		case "innodb_row_lock_time":
			c.lockTimeMs = v
		case "innodb_deadlocks":
			c.deadlocks, c.hasDeadlock = v, true
		case "innodb_buffer_pool_reads":
			c.poolReads = v
		case "innodb_os_log_written":
			c.logBytes = v
		case "innodb_data_fsyncs":
			c.fsyncs = v
		}
	}
	return c, rows.Err()
}

// hostCPU reads the first line of /proc/stat: the jiffies spent busy (user, nice,
// system, irq, softirq, steal) and in all, over every core; zeros where there is no
// /proc/stat (the report then shows no CPU).
func hostCPU() (busy, all int64) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0, 0
	}
	for i, x := range f[1:9] {
		var v int64
		if _, err := fmt.Sscan(x, &v); err != nil {
			return 0, 0
		}
		all += v
		if i != 3 && i != 4 { // idle, iowait
			busy += v
		}
	}
	return busy, all
}

func (c counters) minus(o counters) counters {
	return counters{lockWaits: c.lockWaits - o.lockWaits, lockTimeMs: c.lockTimeMs - o.lockTimeMs,
		deadlocks: c.deadlocks - o.deadlocks, hasDeadlock: c.hasDeadlock,
		poolReads: c.poolReads - o.poolReads, logBytes: c.logBytes - o.logBytes, fsyncs: c.fsyncs - o.fsyncs,
		cpuBusy: c.cpuBusy - o.cpuBusy, cpuAll: c.cpuAll - o.cpuAll, secs: c.secs - o.secs}
}

// cpuShare is the host's busy share of its CPU time over the interval, in percent of
// all its cores (100: every core busy).
func (c counters) cpuShare() float64 {
	if c.cpuAll <= 0 {
		return 0
	}
	return 100 * float64(c.cpuBusy) / float64(c.cpuAll)
}

// perSecond is v over the interval's seconds.
func (c counters) perSecond(v int64) float64 {
	if c.secs <= 0 {
		return 0
	}
	return float64(v) / c.secs
}
