package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/retentionkit/retention/passes"
)

func count(t *testing.T, path, q string) int {
	t.Helper()
	db, err := passes.Open(context.Background(), passes.DriverSQLite, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRowContext(context.Background(), q).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestReseedReplacesADrainedDemoCopy(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "demo.db")
	if err := reseed(ctx, path, 2000, time.Now().UTC()); err != nil {
		t.Fatal(err)
	}
	tables := []string{"audit_log", "audit_attachment", "audit_review", "legal_hold", "export_job", "session", "retention_metadata"}
	seeded := map[string]int{}
	for _, table := range tables {
		seeded[table] = count(t, path, "SELECT count(*) FROM "+table)
	}
	db, err := passes.Open(ctx, passes.DriverSQLite, path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`DELETE FROM audit_attachment`, `DELETE FROM audit_review`, `DELETE FROM legal_hold`, `DELETE FROM export_job`, `DELETE FROM audit_log`} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	// A WAL left by a node that was killed: SQLite would replay it onto the new file.
	if err := os.WriteFile(path+"-wal", []byte("stale"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := reseed(ctx, path, 2000, time.Now().UTC()); err != nil {
		t.Fatal(err)
	}
	for _, table := range tables {
		if n := count(t, path, "SELECT count(*) FROM "+table); n != seeded[table] || n == 0 {
			t.Errorf("after a reseed %s has %d rows, want %d as seeded first", table, n, seeded[table])
		}
	}
	left, _ := filepath.Glob(path + "-seeding*")
	if len(left) != 0 {
		t.Fatalf("files left behind: %v", left)
	}
}

func TestReseedLeavesAnyOtherFileAlone(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	other := filepath.Join(dir, "app.db")
	db, err := passes.Open(ctx, passes.DriverSQLite, other)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `CREATE TABLE customer (id INTEGER PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	text := filepath.Join(dir, "notes.db")
	if err := os.WriteFile(text, []byte("not a database"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{other, text} {
		before, _ := os.ReadFile(path)
		err := reseed(ctx, path, 2000, time.Now().UTC())
		after, _ := os.ReadFile(path)
		if err == nil || !strings.Contains(err.Error(), path) || !bytes.Equal(before, after) {
			t.Errorf("reseed %s: %v; the file changed: %v", path, err, !bytes.Equal(before, after))
		}
	}
}

func TestSeedRefusesWhileANodeListens(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := checkNoNode(context.Background(), addr); err == nil || !strings.Contains(err.Error(), addr) {
		t.Fatalf("with a listener on %s: %v", addr, err)
	}
	l.Close()
	if err := checkNoNode(context.Background(), addr); err != nil {
		t.Fatalf("with nothing on %s: %v", addr, err)
	}
}

func TestGuideNamesTheAddressAndTheDatabase(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	g := guide{DB: "/tmp/it's here/demo.db", Rows: 200000, Took: time.Second, Admin: "127.0.0.1:1234", Config: "examples/demo/retention.yaml"}
	if err := g.print(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"200,000 audit rows", "http://127.0.0.1:1234/passes", "http://127.0.0.1:1234/metrics", "http://127.0.0.1:1234/ui/",
		`RETENTION_DEMO_DB='/tmp/it'\''s here/demo.db' ./bin/retention status --config examples/demo/retention.yaml`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the guide has no %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	g.DB = "examples/demo/demo.db"
	if err := g.print(&b); err != nil || strings.Contains(b.String(), "RETENTION_DEMO_DB=") {
		t.Errorf("on the default database the guide still sets RETENTION_DEMO_DB (%v):\n%s", err, b.String())
	}
}
