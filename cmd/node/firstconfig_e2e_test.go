// End-to-end test of the README's first configuration: its SQL and its file, read out
// of the README itself so the two cannot drift, on a PostgreSQL schema of the test's own.
package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/dbtest"
)

// readmeSection is the README's section under heading, up to the next "## ".
func readmeSection(t *testing.T, heading string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(raw), "\n"+heading+"\n")
	if !ok {
		t.Fatalf("README.md has no %q", heading)
	}
	section, _, _ := strings.Cut(rest, "\n## ")
	return section
}

// fenced is the first code block of lang in text.
func fenced(t *testing.T, text, lang string) string {
	t.Helper()
	_, rest, ok := strings.Cut(text, "```"+lang+"\n")
	if !ok {
		t.Fatalf("no ```%s block", lang)
	}
	block, _, ok := strings.Cut(rest, "```")
	if !ok {
		t.Fatalf("the ```%s block does not end", lang)
	}
	return block
}

// The README's first PostgreSQL configuration, run as the README says on its own SQL:
// validate says ok, a dry run and validate create nothing, a drain deletes the expired
// sessions with their events and keeps the rest, and the ledger tables it creates are
// exactly those the README names.
func TestFirstConfigFromTheREADME(t *testing.T) {
	t.Parallel()
	section := readmeSection(t, "## A first configuration")
	schemaSQL, file := fenced(t, section, "sql"), fenced(t, section, "yaml")
	_, ledgerText, ok := strings.Cut(section, "**What the ledger creates, and where.**")
	if !ok {
		t.Fatal("the section does not say what the ledger creates")
	}
	var promised []string
	for _, m := range regexp.MustCompile("`(retention_[a-z_]+)`").FindAllStringSubmatch(ledgerText, -1) {
		promised = append(promised, m[1])
	}
	slices.Sort(promised)
	promised = slices.Compact(promised)

	ctx := context.Background()
	admin := dbtest.Postgres(t)
	schema := fmt.Sprintf("first_%d", time.Now().UnixNano())
	if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = admin.ExecContext(context.Background(), "DROP SCHEMA "+schema+" CASCADE") })
	dsn := dbtest.PostgresURL()
	if strings.Contains(dsn, "?") {
		dsn += "&search_path=" + schema
	} else {
		dsn += "?search_path=" + schema
	}
	db, err := passes.Open(ctx, passes.DriverPostgres, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	for _, q := range []string{
		schemaSQL,
		`INSERT INTO user_session SELECT g, g, now() - CASE WHEN g % 2 = 0 THEN interval '40 days' ELSE interval '1 day' END FROM generate_series(1, 300) g`,
		`INSERT INTO session_event SELECT g, (g % 300) + 1, now() FROM generate_series(1, 900) g`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	count := func(q string) int {
		t.Helper()
		var n int
		if err := db.QueryRowContext(ctx, q).Scan(&n); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return n
	}
	ledgerTables := func() []string {
		t.Helper()
		rows, err := db.QueryContext(ctx, `SELECT table_name FROM information_schema.tables WHERE table_schema = ? AND starts_with(table_name, 'retention_') ORDER BY 1`, schema)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var names []string
		for rows.Next() {
			var name string
			if err := rows.Scan(&name); err != nil {
				t.Fatal(err)
			}
			names = append(names, name)
		}
		return names
	}

	path := filepath.Join(t.TempDir(), "retention.yaml")
	if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) result {
		t.Helper()
		ctx, cancel := context.WithTimeout(ctx, 2*time.Minute) // a bound on a hang
		defer cancel()
		cmd := exec.CommandContext(ctx, binary, args...)
		cmd.Env = append(os.Environ(), "DATABASE_URL="+dsn)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return result{code, out.String(), errb.String()}
	}

	if r := run("validate", "--config", path); r.code != 0 || r.stdout != "ok: 1 pass\n" {
		t.Fatalf("validate: exit %d, stdout %q:\n%s", r.code, r.stdout, r.stderr)
	}
	if r := run("sweep", "--config", path, "--dry-run"); r.code != 0 || !strings.Contains(r.stdout, "sessions") {
		t.Fatalf("sweep --dry-run: exit %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
	if got := ledgerTables(); len(got) != 0 {
		t.Fatalf("validate and a dry run created %v", got)
	}
	if r := run("sweep", "--config", path, "--drain", "--progress", "never"); r.code != 0 {
		t.Fatalf("sweep --drain: exit %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
	if n := count(`SELECT count(*) FROM user_session WHERE last_seen_at < now() - interval '30 days'`); n != 0 {
		t.Errorf("%d expired sessions left", n)
	}
	if n := count(`SELECT count(*) FROM user_session`); n != 150 {
		t.Errorf("%d sessions left, want the 150 recent ones", n)
	}
	if n := count(`SELECT count(*) FROM session_event`); n != 450 {
		t.Errorf("%d events left, want the 450 of the recent sessions", n)
	}
	if got := ledgerTables(); !slices.Equal(got, promised) {
		t.Errorf("the ledger created %v; the README names %v", got, promised)
	}
}
