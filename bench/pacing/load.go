package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// The foreground: a short OLTP transaction on pgbench's own tables, which share the
// database (buffers, WAL, the two cores) with the table being drained but never its rows.
const oltpScript = `\set aid random(1, %d)
BEGIN;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
UPDATE pgbench_accounts SET abalance = abalance + 1 WHERE aid = :aid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (1, 1, :aid, 1, now());
END;
`

// txn is one foreground transaction: when it ended and its latency from its scheduled
// start (pgbench -R measures from the schedule, so a stall that delays the start counts).
type txn struct {
	at  time.Time
	lat time.Duration
}

// load is a pgbench run at a fixed rate for a fixed time.
type load struct {
	cmd  *exec.Cmd
	dir  string
	done chan error
}

func startLoad(ctx context.Context, dsn string, rate, accounts int, d time.Duration) (*load, error) {
	dir, err := os.MkdirTemp("", "retention-pacing")
	if err != nil {
		return nil, err
	}
	script := filepath.Join(dir, "oltp.sql")
	if err := os.WriteFile(script, fmt.Appendf(nil, oltpScript, accounts), 0o644); err != nil {
		return nil, err
	}
	secs := int(d.Seconds()) + 1
	cmd := exec.CommandContext(ctx, "pgbench", "-n", "-c", "4", "-j", "2", "-R", strconv.Itoa(rate), "-T", strconv.Itoa(secs),
		"-f", script, "-l", "--log-prefix="+filepath.Join(dir, "log"), dsn)
	cmd.Dir = dir
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	l := &load{cmd: cmd, dir: dir, done: make(chan error, 1)}
	go func() { l.done <- cmd.Wait() }()
	return l, nil
}

// wait waits for pgbench to end (by itself, or interrupted: what it logged until then is
// on disk, since it writes its log in blocks and the caller waited past the last window)
// and returns its transactions.
func (l *load) wait() ([]txn, error) {
	defer os.RemoveAll(l.dir)
	exit := <-l.done
	files, _ := filepath.Glob(filepath.Join(l.dir, "log.*"))
	var out []txn
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
			out = append(out, txn{at: time.Unix(sec, usec*1000), lat: time.Duration(us) * time.Microsecond})
		}
		fh.Close()
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("pgbench logged no transaction (exit: %v)", exit)
	}
	return out, nil
}
