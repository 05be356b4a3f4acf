package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"time"

	"github.com/retentionkit/retention/passes"
)

// reseed writes a fresh demo database at path: first beside it, then moved over the
// previous run's copy (whose WAL files go too, since SQLite would replay them onto the
// new file). A file at path that is not a demo database is refused, never replaced.
func reseed(ctx context.Context, path string, rows int, now time.Time) error {
	if err := checkDemo(ctx, path); err != nil {
		return err
	}
	tmp := path + "-seeding" // "-" keeps it under the .gitignore of demo.db-*
	if err := removeDB(tmp); err != nil {
		return err
	}
	if err := seed(ctx, tmp, rows, now); err != nil {
		_ = removeDB(tmp)
		return err
	}
	if err := removeDB(path); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// checkDemo returns nil when path does not exist or holds a demo database, which is
// told by its export_job table (a name no other program of ours uses).
func checkDemo(ctx context.Context, path string) error {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	db, err := passes.Open(ctx, passes.DriverSQLite, path)
	if err != nil {
		return fmt.Errorf("%s exists and cannot be read as a demo database, so it is left alone: %w", path, err)
	}
	defer db.Close()
	var n int
	err = db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'export_job'`).Scan(&n)
	if err != nil || n == 0 {
		return fmt.Errorf("%s exists and is not a demo database (no export_job table), so it is left alone; give -db another path", path)
	}
	return nil
}

// checkNoNode returns an error when something listens on the demo's admin address:
// most likely the node of another make run, whose database a reseed would pull away
// from under it (and whose port the new node could not take anyway).
func checkNoNode(ctx context.Context, addr string) error {
	d := net.Dialer{Timeout: time.Second}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil
	}
	conn.Close()
	return fmt.Errorf("something already listens on %s, the demo's admin address (another make run?): stop it, or give RETENTION_DEMO_ADMIN another address; the demo database is left as it is", addr)
}

// removeDB removes a SQLite database and the files SQLite keeps beside it.
func removeDB(path string) error {
	for _, p := range []string{path, path + "-wal", path + "-shm", path + "-journal"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}
