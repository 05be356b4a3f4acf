package main

import (
	"bufio"
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes"
)

// The databases a run creates and drops are named after config.dbPrefix (-db-prefix),
// so two people measuring on one server do not drop each other's.
func (c config) templateDB() string { return c.dbPrefix + "_tpl" }
func (c config) benchDB() string    { return c.dbPrefix }

// pgEpoch is the first row's timestamp; row i is i*10s later, so the cutoff at row
// 0.9*N leaves 90% of the table expired.
var pgEpoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func cutoffFor(rows int) time.Time { return pgEpoch.Add(time.Duration(rows*9/10) * 10 * time.Second) }

// variant is one way of draining the backlog.
type variant struct {
	name  string
	batch int
	// drain deletes the backlog and reports the rows and the time the drain itself took.
	drain func(ctx context.Context, db *bun.DB, cutoff time.Time) (int64, time.Duration, error)
}

func pgVariants() []variant {
	return []variant{
		{"same pass, plain loop, no runtime", 500, drainPlainLoop(500)},
		{"table pass on the runtime (keyset)", 500, drainWithRuntime(500)},
		{"same pass, plain loop, no runtime", 5000, drainPlainLoop(5000)},
		{"table pass on the runtime (keyset)", 5000, drainWithRuntime(5000)},
		{"same pass, plain loop, no runtime", 10000, drainPlainLoop(10000)},
		{"plain loop, synchronous_commit on", 500, drainPlainLoopDurable(500)},
		{"plain loop, synchronous_commit on", 5000, drainPlainLoopDurable(5000)},
		{"table pass on the runtime (keyset)", 10000, drainWithRuntime(10000)},
		{"re-select from the start each batch", 500, drainReselect(500)},
		{"single DELETE ... IN (SELECT ... LIMIT n)", 500, drainSingleStatement(500)},
		{"single DELETE ... IN (SELECT ... LIMIT n)", 10000, drainSingleStatement(10000)},
		{"one unbounded DELETE", 0, drainUnbounded},
	}
}

func postgresReport(ctx context.Context, c config, report *strings.Builder) error {
	if _, err := exec.LookPath("pgbench"); err != nil {
		return fmt.Errorf("pgbench not found: %w", err)
	}
	admin, err := passes.Open(ctx, passes.DriverPostgres, c.adminDSN)
	if err != nil {
		return err
	}
	defer admin.Close()
	if err := buildTemplate(ctx, admin, c); err != nil {
		return err
	}
	cutoff := cutoffFor(c.rows)
	variants := filterVariants(c, pgVariants())
	results := make([][]result, len(variants))
	var baselines []result
	for rep := 1; rep <= c.reps; rep++ {
		base, err := pgRun(ctx, admin, c, cutoff, nil)
		if err != nil {
			return fmt.Errorf("baseline: %w", err)
		}
		baselines = append(baselines, base)
		for i, v := range variants {
			r, err := pgRun(ctx, admin, c, cutoff, &v)
			if err != nil {
				return fmt.Errorf("%s %d: %w", v.name, v.batch, err)
			}
			fmt.Fprintf(os.Stderr, "drain: postgres rep %d %s B=%d: %.0f rows/s, p99 %v\n", rep, v.name, v.batch, r.rate(), r.p99)
			results[i] = append(results[i], r)
		}
	}
	writePGTable(report, c, variants, results, baselines)
	return nil
}

func buildTemplate(ctx context.Context, admin *bun.DB, c config) error {
	var exists bool
	if err := admin.NewRaw("SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = ?)", c.templateDB()).Scan(ctx, &exists); err != nil {
		return err
	}
	if exists {
		db, err := passes.Open(ctx, passes.DriverPostgres, withDatabase(c.adminDSN, c.templateDB()))
		if err == nil {
			var n int
			err = db.NewRaw("SELECT count(*) FROM audit_log").Scan(ctx, &n)
			db.Close()
			if err == nil && n == c.rows {
				return nil
			}
		}
		if _, err := admin.ExecContext(ctx, "DROP DATABASE "+c.templateDB()+" WITH (FORCE)"); err != nil {
			return err
		}
	}
	fmt.Fprintf(os.Stderr, "drain: building the %d-row template database\n", c.rows)
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+c.templateDB()); err != nil {
		return err
	}
	db, err := passes.Open(ctx, passes.DriverPostgres, withDatabase(c.adminDSN, c.templateDB()))
	if err != nil {
		return err
	}
	defer db.Close()
	stmts := []string{
		`CREATE TABLE audit_log (id bigserial PRIMARY KEY, occurred_at timestamptz NOT NULL, state text NOT NULL, payload text)`,
		fmt.Sprintf(`INSERT INTO audit_log (occurred_at, state, payload)
			SELECT '%s'::timestamptz + i * interval '10 seconds', (ARRAY['completed','cancelled','discarded'])[1 + i %% 3], repeat('x', 200)
			FROM generate_series(1, %d) AS i`, pgEpoch.Format(time.RFC3339), c.rows),
		`CREATE INDEX audit_log_occurred_at ON audit_log (occurred_at, id)`,
		`VACUUM ANALYZE audit_log`,
	}
	for _, s := range stmts {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("%s: %w", strings.Fields(s)[0], err)
		}
	}
	return nil
}

func withDatabase(dsn, name string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return dsn
	}
	u.Path = "/" + name
	return u.String()
}

// pgRun recreates the bench database from the template, starts the OLTP load, runs the
// variant (nil: no drain, the baseline) and measures both.
func pgRun(ctx context.Context, admin *bun.DB, c config, cutoff time.Time, v *variant) (result, error) {
	if _, err := admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+c.benchDB()+" WITH (FORCE)"); err != nil {
		return result{}, err
	}
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+c.benchDB()+" TEMPLATE "+c.templateDB()+" STRATEGY FILE_COPY"); err != nil {
		return result{}, err
	}
	dsn := withDatabase(c.adminDSN, c.benchDB())
	db, err := passes.Open(ctx, passes.DriverPostgres, dsn)
	if err != nil {
		return result{}, err
	}
	defer db.Close()
	for _, warm := range []string{"SELECT count(*) FROM audit_log", "SELECT count(*) FROM audit_log WHERE occurred_at < now()", "CHECKPOINT"} {
		if _, err := db.ExecContext(ctx, warm); err != nil {
			return result{}, err
		}
	}
	load, err := startLoad(ctx, dsn, c.rate, c.rows)
	if err != nil {
		return result{}, err
	}
	time.Sleep(time.Second) // let the load reach its rate before the drain starts
	start := time.Now()
	var rows int64
	elapsed := 5 * time.Second
	if v != nil {
		rows, elapsed, err = v.drain(ctx, db, cutoff)
	} else {
		time.Sleep(elapsed)
	}
	end := time.Now()
	latencies, lerr := load.stop(start, end)
	if err != nil {
		return result{}, err
	}
	if lerr != nil {
		return result{}, lerr
	}
	if v != nil && rows != int64(c.rows*9/10-1) {
		return result{}, fmt.Errorf("drained %d rows, want %d", rows, c.rows*9/10-1)
	}
	return result{rows: rows, elapsed: elapsed, p50: percentile(latencies, 0.50), p99: percentile(latencies, 0.99)}, nil
}

// load is a running pgbench.
type load struct {
	cmd *exec.Cmd
	dir string
}

const oltpScript = `\set id random(1, %d)
BEGIN;
SELECT payload FROM audit_log WHERE id = :id;
INSERT INTO audit_log (occurred_at, state, payload) VALUES (now(), 'completed', repeat('x', 200));
END;
`

func startLoad(ctx context.Context, dsn string, rate, rows int) (*load, error) {
	dir, err := os.MkdirTemp("", "retention-pgbench")
	if err != nil {
		return nil, err
	}
	script := filepath.Join(dir, "oltp.sql")
	if err := os.WriteFile(script, fmt.Appendf(nil, oltpScript, rows), 0o644); err != nil {
		return nil, err
	}
	dsn = withoutQuery(dsn, "read_timeout") // the Go driver's parameter; libpq refuses it
	cmd := exec.CommandContext(ctx, "pgbench", "-n", "-c", "4", "-j", "2", "-R", strconv.Itoa(rate), "-T", "600",
		"-f", script, "-l", "--log-prefix="+filepath.Join(dir, "log"), dsn)
	cmd.Dir = dir
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &load{cmd: cmd, dir: dir}, nil
}

// stop waits for the log to flush past end, stops pgbench, and returns the latencies of
// the transactions that finished between start and end, sorted.
func (l *load) stop(start, end time.Time) ([]time.Duration, error) {
	defer os.RemoveAll(l.dir)
	time.Sleep(2 * time.Second) // pgbench writes its log in 4 KiB blocks: let the window's reach the disk
	_ = l.cmd.Process.Signal(syscall.SIGINT)
	_ = l.cmd.Wait()
	files, _ := filepath.Glob(filepath.Join(l.dir, "log.*"))
	var out []time.Duration
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			// client transaction time_us script epoch_s epoch_us [lag_us]
			fields := strings.Fields(sc.Text())
			if len(fields) < 6 {
				continue
			}
			us, _ := strconv.ParseInt(fields[2], 10, 64)
			sec, _ := strconv.ParseInt(fields[4], 10, 64)
			usec, _ := strconv.ParseInt(fields[5], 10, 64)
			at := time.Unix(sec, usec*1000)
			if at.Before(start) || at.After(end) {
				continue
			}
			out = append(out, time.Duration(us)*time.Microsecond)
		}
		fh.Close()
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("pgbench logged no transaction during the drain")
	}
	slices.Sort(out)
	return out, nil
}

func writePGTable(w *strings.Builder, c config, variants []variant, results [][]result, baselines []result) {
	var baseP50, baseP99 []float64
	for _, b := range baselines {
		baseP50 = append(baseP50, ms(b.p50))
		baseP99 = append(baseP99, ms(b.p99))
	}
	fmt.Fprintf(w, "### PostgreSQL, under a %d tps OLTP load\n\n", c.rate)
	fmt.Fprintf(w, "Load: pgbench, 4 clients, `-R %d`, each transaction reads a random row by id and inserts a new one into the same table. "+
		"Baseline (no drain): p50 %s ms, p99 %s ms. Ratios are per repetition, then the median.\n\n",
		c.rate, spreadOf(baseP50).format("", 2), spreadOf(baseP99).format("", 2))
	fmt.Fprintln(w, "| variant | batch | rows/s | ÷ plain loop, same batch | ÷ unbounded | load p50 ms | load p99 ms | p99 ÷ baseline |")
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	for i, v := range variants {
		rates, vsPlain, vsUnbounded := ratios(variants, results, i)
		var p50, p99, p99Ratio []float64
		for rep, r := range results[i] {
			p50 = append(p50, ms(r.p50))
			p99 = append(p99, ms(r.p99))
			p99Ratio = append(p99Ratio, ms(r.p99)/ms(baselines[rep].p99))
		}
		batch, plainCol := batchAndPlain(v, vsPlain)
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", v.name, batch, spreadOf(rates).format("", 0), plainCol,
			spreadOf(vsUnbounded).format("", 2), spreadOf(p50).format("", 2), spreadOf(p99).format("", 2), spreadOf(p99Ratio).format("", 2))
	}
	fmt.Fprintln(w)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
